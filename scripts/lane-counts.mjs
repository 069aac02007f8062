/**
 * A vitest reporter beside the default one: at the end of a run, how many tests ran with the fast
 * lanes and how many again with the reference lanes (vitest.config.ts's two projects), so CI's log
 * says that both lanes were tested and how much.
 */
export default class LaneCounts {
  /** @param {ReadonlyArray<import("vitest/node").TestModule>} modules */
  onTestRunEnd(modules) {
    /** @type {Map<string, { files: number, tests: number, passed: number }>} */
    const lanes = new Map();
    for (const module of modules) {
      const name = module.project.name || "tests";
      const lane = lanes.get(name) ?? { files: 0, tests: 0, passed: 0 };
      lane.files++;
      for (const test of module.children.allTests()) {
        lane.tests++;
        if (test.result().state === "passed") lane.passed++;
      }
      lanes.set(name, lane);
    }
    if (lanes.size < 2) return;
    const lines = [...lanes].map(
      ([name, l]) => ` ${name}: ${l.tests} tests in ${l.files} files, ${l.passed} passed`,
    );
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
