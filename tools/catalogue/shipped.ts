/**
 * What the seeder keeps at `/byteseek/tools/‥shipped/<name>` (seed.ts): the hash of the declaration
 * it shipped last, so it can tell a declaration nobody touched (updated on upgrade) from someone's
 * change (kept).
 */
import { z } from "zod";
import { docFamily } from "../doc/read-write.js";

const Shipped = z.object({ hash: z.string() }).loose();

/** The shipped-marker family (tools/doc/docs.ts names it). */
export const ShippedDoc = docFamily("the hash of a shipped declaration", Shipped);
