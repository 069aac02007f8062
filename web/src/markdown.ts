/**
 * A small, safe markdown renderer for the model's answers in the chat. The model's text is never
 * parsed as HTML: it is split into blocks and inline pieces here, and every piece becomes a DOM
 * element or a text node built with `document.createElement` / `createTextNode` — so `<script>`,
 * `<img onerror>` or an HTML comment in an answer stays visible text. What it renders: paragraphs,
 * headings, fenced code blocks, bulleted and numbered lists, block quotes, inline code, strong and
 * emphasis, and links — only `http:` and `https:` ones (any other scheme, `javascript:` among them,
 * stays text). Anything else shows as written.
 */

import { h } from "./dom.js";

type Inline = Node;

/** The answer's text as a fragment of elements, ready to append. */
export function renderMarkdown(text: string): DocumentFragment {
  const out = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      i++;
      // an unclosed fence (an answer still streaming) runs to the end
      while (i < lines.length && !(lines[i] ?? "").trimStart().startsWith(marker))
        body.push(lines[i++] ?? "");
      i++;
      const code = h("code", {}, document.createTextNode(body.join("\n")));
      if (fence[2]) code.dataset.lang = fence[2];
      out.append(h("pre", { class: "md-code" }, code));
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      // the chat's own headings are h1/h2: an answer's start at h3
      const level = Math.min(6, (heading[1] ?? "#").length + 2);
      out.append(h(`h${level}` as "h3", { class: "md-heading" }, ...inline(heading[2] ?? "")));
      i++;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const ordered = /^\s*\d+[.)]\s/.test(line);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length && (lines[i] ?? "").trim() !== "") {
        const m = LIST_ITEM.exec(lines[i] ?? "");
        if (m) list.append(h("li", {}, ...inline(m[2] ?? "")));
        else list.lastElementChild?.append(document.createTextNode(" "), ...inline((lines[i] ?? "").trim()));
        i++;
      }
      out.append(list);
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i] ?? ""))
        quoted.push((lines[i++] ?? "").replace(/^ {0,3}> ?/, ""));
      out.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    // a paragraph: the lines up to a blank one or the start of another block
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i] ?? "";
      if (l.trim() === "" || (para.length > 0 && startsBlock(l))) break;
      para.push(l);
      i++;
    }
    const p = h("p", {});
    para.forEach((l, n) => {
      if (n > 0) p.append(h("br", {}));
      p.append(...inline(l));
    });
    out.append(p);
  }
  return out;
}

const LIST_ITEM = /^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$/;

function startsBlock(line: string): boolean {
  return /^ {0,3}(`{3,}|~{3,}|#{1,6}\s|>)/.test(line) || LIST_ITEM.test(line);
}

/**
 * Inline pieces, earliest match first: `code` (literal), **strong** / __strong__, *em* / _em_
 * (not inside a word, so snake_case stays), [text](http(s) URL).
 */
const INLINE =
  /`([^`\n]+)`|\*\*(?=\S)([^*\n]+?)\*\*|(?<![\w])__(?=\S)([^_\n]+?)__(?![\w])|\*(?=\S)([^*\n]+?)\*|(?<![\w])_(?=\S)([^_\n]+?)_(?![\w])|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

function inline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index ?? 0;
    if (at > last) out.push(document.createTextNode(text.slice(last, at)));
    last = at + m[0].length;
    if (m[1] !== undefined) out.push(h("code", {}, document.createTextNode(m[1])));
    else if (m[2] !== undefined || m[3] !== undefined)
      out.push(h("strong", {}, ...inline(m[2] ?? m[3] ?? "")));
    else if (m[4] !== undefined || m[5] !== undefined) out.push(h("em", {}, ...inline(m[4] ?? m[5] ?? "")));
    else out.push(link(m[6] ?? "", m[7] ?? "", m[0]));
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

/** A link to an http(s) URL, opened in a new tab without a referrer; any other target stays text. */
function link(label: string, target: string, written: string): Inline {
  let url: URL | undefined;
  try {
    url = new URL(target);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
    return document.createTextNode(written);
  const a = h(
    "a",
    { href: url.href, target: "_blank", rel: "noopener noreferrer nofollow" },
    ...inline(label),
  );
  a.title = url.href;
  return a;
}
