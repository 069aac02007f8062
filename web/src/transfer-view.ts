/**
 * A directory's export (GET /v1/export/<dir/>, saved as a .ndjson download) and an import with a
 * preview: the file's lines are read here (int64s beyond 2^53 kept as their digits), the keys they
 * name read in transactions of 128 gets, and the page shows what the import would do — new keys,
 * changed values with their diff, read-only keys it needs `force` for — before POST /v1/import.
 */
import type { JsonValue } from "./api.js";
import { toast } from "./dialogs.js";
import { diffLines } from "./diff.js";
import { h, replace } from "./dom.js";
import { parseJson } from "./exact-json.js";
import { isDir, routeUrl } from "./keys.js";
import type { TreeOps } from "./tree-ops-api.js";
import { valueText } from "./value-editor.js";
import { diffBlock, errorText } from "./view-parts.js";

/** Rows shown per group of the preview; the counts are always whole. */
const SHOWN = 100;
/** The largest file the preview reads (the server's own body limit may be lower). */
const MAX_FILE = 32 * 1024 * 1024;

interface Line {
  line: number;
  key: string;
  kind: string;
  value?: JsonValue;
  ro?: boolean;
}

interface Preview {
  added: Line[];
  changed: Array<{ entry: Line; before: { kind: string; value?: JsonValue; ro?: boolean } }>;
  same: number;
  readOnly: Line[];
}

export function createTransferSection(ops: TreeOps, dir: string): HTMLElement {
  const status = h("p", { class: "notice", role: "status", "aria-live": "polite" });
  const exportButton = h(
    "button",
    {
      type: "button",
      id: "export-dir",
      onclick: () =>
        void (async () => {
          try {
            const text = await ops.exportText(dir);
            download(text, fileName(dir));
            const n = text.split("\n").filter(Boolean).length;
            replace(status, `Exported ${dir}: ${n} line${n === 1 ? "" : "s"} saved as ${fileName(dir)}.`);
          } catch (err) {
            replace(status, h("span", { class: "error" }, `Not exported: ${errorText(err)}`));
          }
        })(),
    },
    `Export ${dir} as NDJSON`,
  );

  const file = h("input", {
    type: "file",
    id: "import-file",
    accept: ".ndjson,.jsonl,.json,application/x-ndjson,application/json",
    onchange: () => void previewFile(),
  });
  const previewEl = h("div", { class: "import-preview", id: "import-preview", "aria-live": "polite" });

  async function previewFile(): Promise<void> {
    const f = file.files?.[0];
    replace(previewEl);
    if (!f) return;
    if (f.size > MAX_FILE) {
      replace(
        previewEl,
        h(
          "p",
          { class: "error" },
          `${f.name} is ${f.size} bytes, over ${MAX_FILE}: import it with kvspace import.`,
        ),
      );
      return;
    }
    const text = await f.text();
    const parsed = parseLines(text);
    if ("error" in parsed) {
      replace(
        previewEl,
        h(
          "p",
          { class: "error", role: "alert", id: "import-error" },
          `${f.name}: ${parsed.error}. Nothing can be imported until it is fixed.`,
        ),
      );
      return;
    }
    replace(previewEl, h("p", { class: "muted" }, `Reading the ${parsed.length} keys ${f.name} names…`));
    let preview: Preview;
    try {
      preview = await compare(ops, parsed);
    } catch (err) {
      replace(previewEl, h("p", { class: "error" }, `Could not preview: ${errorText(err)}`));
      return;
    }
    renderPreview(f.name, text, parsed.length, preview);
  }

  function renderPreview(name: string, text: string, lines: number, p: Preview): void {
    const force = h("input", { type: "checkbox", id: "import-force" });
    const go = h(
      "button",
      { type: "button", class: "primary", id: "import-go" },
      `Import ${lines} line${lines === 1 ? "" : "s"}`,
    );
    const result = h("p", { role: "status" });
    const needForce = p.readOnly.length > 0;
    const sync = () => {
      go.disabled = needForce && !force.checked;
    };
    force.addEventListener("change", sync);
    sync();
    go.addEventListener(
      "click",
      () =>
        void (async () => {
          go.disabled = true;
          try {
            const r = await ops.importText(text, force.checked);
            replace(
              result,
              `Imported ${r.imported} line${r.imported === 1 ? "" : "s"} at revision ${r.rev}.`,
            );
            toast(`Imported ${name}: ${r.imported} lines`);
            file.value = "";
          } catch (err) {
            replace(result, h("span", { class: "error" }, `Nothing imported: ${errorText(err)}`));
            sync();
          }
        })(),
    );
    const link = (key: string) => h("a", { href: routeUrl({ view: "tree", key }) }, key);
    replace(
      previewEl,
      h(
        "p",
        { id: "import-summary" },
        `${name}: ${p.added.length} new, ${p.changed.length} changed, ${p.same} unchanged` +
          (needForce ? `, ${p.readOnly.length} read-only (needs force)` : "") +
          ".",
      ),
      group("New keys", "import-added", p.added, (e) =>
        h(
          "li",
          {},
          link(e.key),
          h(
            "span",
            { class: "muted" },
            ` ${e.kind}${isDir(e.key) ? "" : `: ${valueText(e.kind, e.value).slice(0, 80)}`}`,
          ),
        ),
      ),
      group("Changed values", "import-changed", p.changed, ({ entry, before }) =>
        h(
          "li",
          {},
          h(
            "details",
            {},
            h("summary", {}, link(entry.key), before.ro ? h("span", { class: "badge" }, " read-only") : null),
            before.kind !== entry.kind
              ? h("p", { class: "muted" }, `kind ${before.kind} → ${entry.kind}`)
              : null,
            diffBlock(
              diffLines(valueText(before.kind, before.value), valueText(entry.kind, entry.value ?? null)),
            ),
          ),
        ),
      ),
      group("Read-only keys it writes (only with force)", "import-readonly", p.readOnly, (e) =>
        h("li", {}, link(e.key)),
      ),
      needForce
        ? h(
            "label",
            { class: "check" },
            force,
            ` force: overwrite the ${p.readOnly.length} read-only key${p.readOnly.length === 1 ? "" : "s"}`,
          )
        : null,
      h("div", { class: "actions" }, go),
      result,
    );
  }

  return h(
    "details",
    { class: "transfer", id: "transfer" },
    h("summary", {}, "Import / export"),
    h("p", {}, exportButton),
    h(
      "label",
      { for: "import-file" },
      "Import an NDJSON file (keys as its lines name them; nothing is written before you confirm)",
    ),
    file,
    previewEl,
    status,
  );
}

/** Each non-empty line as an entry, or the first line that is wrong. */
function parseLines(text: string): Line[] | { error: string } {
  const out: Line[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    const r = parseJson(raw, { bigInt: "string" });
    if (!r.ok) return { error: `line ${i + 1}, ${r.error.replace(/^line 1, /, "")}` };
    const e = r.value;
    if (
      e === null ||
      typeof e !== "object" ||
      Array.isArray(e) ||
      typeof e.key !== "string" ||
      typeof e.kind !== "string"
    )
      return { error: `line ${i + 1}: an entry is an object with a "key" and a "kind"` };
    out.push({
      line: i + 1,
      key: e.key,
      kind: e.kind,
      ...(e.value !== undefined ? { value: e.value } : {}),
      ...(typeof e.ro === "boolean" ? { ro: e.ro } : {}),
    });
  }
  return out;
}

async function compare(ops: TreeOps, lines: Line[]): Promise<Preview> {
  const current = await ops.getMany(lines.map((l) => l.key));
  const p: Preview = { added: [], changed: [], same: 0, readOnly: [] };
  for (const entry of lines) {
    const cur = current.get(entry.key);
    if (!cur) {
      p.added.push(entry);
      continue;
    }
    if (isDir(entry.key)) {
      p.same++;
      continue;
    }
    const before = { kind: String(cur.kind), value: cur.value, ro: cur.ro === true };
    // The import writes every line's value, so a read-only key needs force even when unchanged.
    if (before.ro) p.readOnly.push(entry);
    const same =
      before.kind === entry.kind &&
      valueText(before.kind, before.value) === valueText(entry.kind, entry.value) &&
      (entry.ro === undefined || entry.ro === before.ro);
    if (same) {
      p.same++;
      continue;
    }
    p.changed.push({ entry, before });
  }
  return p;
}

function group<T>(title: string, id: string, items: T[], row: (item: T) => HTMLElement): HTMLElement | null {
  if (!items.length) return null;
  return h(
    "section",
    { id },
    h("h3", {}, `${title} (${items.length})`),
    h("ul", { class: "results" }, ...items.slice(0, SHOWN).map(row)),
    items.length > SHOWN ? h("p", { class: "muted" }, `and ${items.length - SHOWN} more`) : null,
  );
}

/** Saves `text` as a file: a blob behind a link with `download`, clicked once. */
function download(text: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `/docs/guide/` → `docs-guide.ndjson`; the root is `tree.ndjson`. */
export function fileName(dir: string): string {
  const base = dir.replace(/^\/|\/$/g, "").replace(/[^A-Za-z0-9._-]+/g, "-");
  return `${base || "tree"}.ndjson`;
}
