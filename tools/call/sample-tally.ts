/**
 * The samples of the run's model an upstream asked for during one call. Until the call's record is
 * written they go with it (its usage delta: one write with the call's counters); a sample that
 * finishes after that — an upstream that did not wait for its answer, or a provider that answered
 * as the call ended — is counted on its own through `late`, so no token spent goes uncounted.
 */
import type { Sampled } from "../records/usage.js";

export interface SampleTally {
  /** Told of each sample's tokens as it finishes (CallAsksOptions.onSample). */
  add(tokens: { input: number; output: number }): void;
  /** What goes with the call's record (none when no sample finished yet); later samples go to `late`. */
  take(): Sampled | undefined;
}

export function createSampleTally(late: (sampled: Sampled) => void): SampleTally {
  const sum: Sampled = { samples: 0, input: 0, output: 0 };
  let taken = false;
  return {
    add(tokens) {
      if (taken) {
        late({ samples: 1, input: tokens.input, output: tokens.output });
        return;
      }
      sum.samples++;
      sum.input += tokens.input;
      sum.output += tokens.output;
    },
    take() {
      taken = true;
      return sum.samples > 0 ? { ...sum } : undefined;
    },
  };
}
