/**
 * Certificates for TLS tests, made with openssl in a folder: two CAs (`ca`, the one a test trusts,
 * and `other-ca`) and leaf certificates each signed by one of them (`<name>.pem`, `<name>.key`).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** One leaf certificate: its name (files and CN), its CA, its subjectAltName and extendedKeyUsage. */
export interface Leaf {
  name: string;
  ca: "ca" | "other-ca";
  altNames: string;
  usage?: string;
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export function makeCertificates(dir: string, leaves: readonly Leaf[]): void {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  for (const ca of ["ca", "other-ca"])
    openssl(
      "req",
      "-x509",
      ...EC,
      "-keyout",
      `${ca}.key`,
      "-out",
      `${ca}.pem`,
      "-days",
      "2",
      "-subj",
      `/CN=byteseek test ${ca}`,
    );
  for (const { name, ca, altNames, usage = "serverAuth" } of leaves) {
    openssl("req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    writeFileSync(
      join(dir, `${name}.ext`),
      `subjectAltName=${altNames}\nextendedKeyUsage=${usage}\nbasicConstraints=CA:FALSE\n`,
    );
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.pem`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    );
  }
}
