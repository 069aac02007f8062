/**
 * `BYTESEEK_KILL_AT`: fault injection for the chaos test and the durability bench. `effect:N`
 * kills this process (SIGKILL, no clean-up) when the N-th call it executes has its started record
 * stored and has not run yet; `record:N` when the N-th call has run and its result is not yet
 * recorded. Several points are separated by commas; N counts from 1 in this process. Unset: no
 * fault is injected (the runtime is not even told).
 */
import type { Failpoint } from "../tools/runtime.js";
import { AgentError } from "./errors.js";

const POINT = /^(effect|record):([1-9][0-9]*)$/;

export function killAt(
  spec: string | undefined,
  kill = () => process.kill(process.pid, "SIGKILL"),
): Failpoint | undefined {
  if (spec === undefined || spec.trim() === "") return undefined;
  const points = spec.split(",").map((part) => {
    const m = POINT.exec(part.trim());
    if (!m)
      throw new AgentError(
        "AGENT_BAD_SETTING",
        `BYTESEEK_KILL_AT takes effect:N or record:N (comma-separated), got ${JSON.stringify(spec)}; unset it to run without fault injection`,
        { setting: "BYTESEEK_KILL_AT" },
      );
    return `${m[1]}:${m[2]}`;
  });
  const seen = { effect: 0, record: 0 };
  return function failpoint(point) {
    seen[point]++;
    if (points.includes(`${point}:${seen[point]}`)) kill();
  };
}
