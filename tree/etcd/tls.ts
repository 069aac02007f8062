/**
 * The TLS material of `https` etcd members, read once at start from the files the settings name
 * (BYTESEEK_ETCD_CA, BYTESEEK_ETCD_CERT, BYTESEEK_ETCD_KEY) and checked there: a file that cannot
 * be read, a certificate without its key or a key that is not the certificate's is refused before
 * the first call, naming the setting, rather than failing every call later.
 */
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { TreeError } from "../errors.js";
import type { EtcdTls } from "./h2.js";

/** Paths of the PEM files, as the settings give them. */
export interface EtcdTlsFiles {
  /** The CA that signed the members' certificates (absent: the system's CAs). */
  ca?: string;
  /** This client's certificate and its key, for members that ask for one (etcd's --client-cert-auth). */
  cert?: string;
  key?: string;
}

const SETTING = { ca: "BYTESEEK_ETCD_CA", cert: "BYTESEEK_ETCD_CERT", key: "BYTESEEK_ETCD_KEY" } as const;
const WHAT = {
  ca: "the PEM file of the CA that signed the etcd members' certificates",
  cert: "the PEM file of this client's certificate",
  key: "the PEM file of that certificate's private key",
} as const;

const invalid = (message: string, details: Record<string, unknown> = {}) =>
  new TreeError("TREE_INVALID_OPTION", message, details);

/** Reads and checks the files; TREE_INVALID_OPTION names the setting and says what it must be. */
export function readEtcdTls(files: EtcdTlsFiles): EtcdTls {
  if ((files.cert === undefined) !== (files.key === undefined))
    throw invalid(
      `${SETTING.cert} and ${SETTING.key} go together (a client certificate and its key); set both, or neither`,
    );
  const tls: EtcdTls = {};
  for (const part of ["ca", "cert", "key"] as const) {
    const path = files[part];
    if (path === undefined) continue;
    try {
      tls[part] = readFileSync(path);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw invalid(`${SETTING[part]}=${path} cannot be read (${why}); give ${WHAT[part]}`, {
        setting: SETTING[part],
      });
    }
  }
  // node takes any bytes as a CA and then trusts nothing: say so now.
  if (tls.ca && !tls.ca.includes("-----BEGIN CERTIFICATE-----"))
    throw invalid(`${SETTING.ca}=${files.ca} holds no PEM certificate; give ${WHAT.ca}`, {
      setting: SETTING.ca,
    });
  checkEtcdTls(tls);
  return tls;
}

/** Refuses material node's TLS would refuse at the first connection (not PEM, or a key that is not the certificate's). */
export function checkEtcdTls(tls: EtcdTls): void {
  try {
    createSecureContext({ ...tls });
  } catch (err) {
    throw invalid(
      `the etcd TLS files do not make a TLS context (${err instanceof Error ? err.message : String(err)}); ${SETTING.ca}, ${SETTING.cert} and ${SETTING.key} must be PEM files, the key the certificate's`,
    );
  }
}
