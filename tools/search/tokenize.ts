/**
 * Words of a text for the tool index, the same for a declaration and a query, with no model and no
 * network: Latin-script words (accents folded, camelCase, snake_case and dotted names split, a light
 * English stemmer) and, for scripts written without spaces (Han, kana, Hangul), single characters
 * and overlapping pairs — so `读取文件` finds a tool described as `读取一个文件的内容`.
 */

/** Scripts written without spaces between words: indexed by character and character pair. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** A letter or digit of any script. */
const WORDISH = /[\p{L}\p{N}]/u;
const COMBINING = /\p{M}+/gu;

/** Words too common in tool descriptions to tell tools apart. */
const STOPWORDS = new Set(
  (
    "a an and are as at be by can do does for from has have how i if in into is it its me my of on or " +
    "so that the their them then there these this those to was we what when which will with you your"
  ).split(" "),
);

/** A light suffix stemmer: enough to meet `repositories`/`repository`, `listing`/`list`, `created`/`create`. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("es") && /(ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  if (w.endsWith("ing") && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith("ed") && w.length > 4) w = undouble(w.slice(0, -2));
  if (w.endsWith("e") && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** `running` → `run`, `listed` → `list`: a doubled consonant left by a stripped suffix is halved. */
function undouble(w: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w) ? w.slice(0, -1) : w;
}

/** Splits `getRepoContent`, `list_issues`, `edit.read`, `HTTPServer2` into their words. */
function splitCompound(text: string): string {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .replace(/[._\-/:]+/g, " ");
}

/**
 * The index words of `text`, in order, repeats kept (term frequency counts them). Latin words are
 * folded to lower case without accents and stemmed; stopwords go; a run of unspaced script gives
 * each character and each adjacent pair.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const folded = splitCompound(text.normalize("NFKC")).toLowerCase();
  let word = "";
  let run = "";
  const flushWord = () => {
    if (word !== "" && !STOPWORDS.has(word)) out.push(stem(word));
    word = "";
  };
  const flushRun = () => {
    const chars = [...run];
    for (let i = 0; i < chars.length; i++) {
      out.push(chars[i]!);
      if (i + 1 < chars.length) out.push(chars[i]! + chars[i + 1]!);
    }
    run = "";
  };
  for (const ch of folded) {
    if (UNSPACED.test(ch)) {
      flushWord();
      run += ch;
    } else if (WORDISH.test(ch)) {
      flushRun();
      // accents folded per character: decomposing a whole text would split Hangul syllables too
      word += ch.charCodeAt(0) < 0x80 ? ch : ch.normalize("NFKD").replace(COMBINING, "");
    } else {
      flushWord();
      flushRun();
    }
  }
  flushWord();
  flushRun();
  return out;
}
