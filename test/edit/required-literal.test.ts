import { describe, expect, it } from "vitest";
import { requiredLiteral } from "../../tools/edit/required-literal.js";

describe("requiredLiteral (grep's byte prefilter)", () => {
  it.each([
    ["TODO", "TODO"],
    ["module\\.exports\\s*=\\s*require\\(", "module.exports"],
    ["colou?r name", "r name"],
    ["foo.*barbaz", "barbaz"],
    ["abcd+ef", "abcd"],
    ["x{0,2}yyyy", "yyyy"],
  ])("finds the text every match of %s holds", (pattern, literal) => {
    expect(requiredLiteral(pattern)).toBe(literal);
  });

  it.each(["foo|bar", "(?<=a)bcd", "(abc)?", "\\d+", "a.b", "(\\w+) \\1xyz"])("gives up on %s", (pattern) => {
    expect(requiredLiteral(pattern)).toBeUndefined();
  });
});
