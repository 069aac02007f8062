#!/usr/bin/env node
/**
 * The `kvspace` executable: inspect and edit the byteseek tree. It turns on Node's compile cache
 * (Node 22.1+: compiled code is kept between runs; absent on Node 20) before anything else is
 * loaded, then hands the process to kvspace-main.ts; a plain tree command loads only the tree
 * (quick.ts).
 */
import module from "node:module";

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import("./kvspace-main.js");
