import { describe, expect, it } from "vitest";
import { median, pairedRatio } from "../../bench/report.js";

describe("bench figures", () => {
  it("takes a ratio within each round, then the median of those", () => {
    // Round 2 ran when the machine was slow for both: a ratio of medians mixes rounds.
    const ours = [200, 100, 190];
    const theirs = [150, 60, 160];
    expect(pairedRatio(ours, theirs)).toBeCloseTo(200 / 150, 10); // of 1.33, 1.67 and 1.19
    expect(median(ours) / median(theirs)).toBeCloseTo(190 / 150, 10);
  });

  it("takes the median of an even count as the mean of the middle two", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(pairedRatio([2, 4], [1, 1])).toBe(3);
  });
});
