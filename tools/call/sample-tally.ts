/**
 * The samples of the run's model an upstream asked for during one call. Until the call's record is
 * written they go with it (its usage delta: one write with the call's counters); one that finishes
 * after that — an upstream that did not wait for its answer — is counted on its own through `late`,
 * so no token the provider reports goes uncounted. A sample the call's end stopped (its tokens
 * unknown) is counted as `stopped`, so the usage shows that some spend is not in `tokens`.
 */
import type { SampleTold } from "../gate/call-asks.js";
import type { Sampled } from "../records/usage.js";

export interface SampleTally {
  /** Told of each sample as it ends (CallAsksOptions.onSample). */
  add(told: SampleTold): void;
  /** What goes with the call's record (none when no sample ended yet); later ones go to `late`. */
  take(): Sampled | undefined;
}

export function createSampleTally(late: (sampled: Sampled) => void): SampleTally {
  const sum = { samples: 0, input: 0, output: 0, stopped: 0 };
  let taken = false;
  return {
    add(told) {
      const one =
        "stopped" in told
          ? { samples: 0, input: 0, output: 0, stopped: 1 }
          : { samples: 1, input: told.tokens.input, output: told.tokens.output, stopped: 0 };
      if (taken) {
        late(sampled(one));
        return;
      }
      sum.samples += one.samples;
      sum.input += one.input;
      sum.output += one.output;
      sum.stopped += one.stopped;
    },
    take() {
      taken = true;
      return sum.samples > 0 || sum.stopped > 0 ? sampled(sum) : undefined;
    },
  };
}

/** The counts as the usage takes them (`stopped` only when there are any). */
function sampled(c: { samples: number; input: number; output: number; stopped: number }): Sampled {
  const { stopped, ...counted } = c;
  return stopped > 0 ? { ...counted, stopped } : counted;
}
