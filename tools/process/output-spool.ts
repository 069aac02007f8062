import { type FileHandle, open, rename } from "node:fs/promises";
import { Writable } from "node:stream";

/**
 * A command's output on disk, capped: appended as it comes, and whenever the file reaches twice
 * the cap it is rewritten to its last `capBytes` (so the disk never holds more than 2 × cap, and
 * the tail is always whole). Counts every byte and line that went through, kept or not.
 */
export class OutputSpool extends Writable {
  /** Bytes written by the command in all. */
  bytes = 0;
  /** Newlines in all the output. */
  newlines = 0;
  /** The last byte written (10 when the output ends with a newline). */
  lastByte = 10;
  private fh: FileHandle | undefined;
  private size = 0;

  constructor(
    readonly file: string,
    private readonly capBytes: number,
  ) {
    super();
  }

  /** The disk refused a write (full, gone): the output is still counted and drained, no longer kept. */
  failed: Error | undefined;

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    // never fail the stream: a command blocked on a full pipe would hang until its timeout
    this.append(chunk).then(
      () => done(),
      (err: Error) => {
        this.failed ??= err;
        done();
      },
    );
  }

  override _final(done: (err?: Error | null) => void): void {
    const fh = this.fh;
    this.fh = undefined;
    (fh ? fh.close() : Promise.resolve()).then(() => done(), done);
  }

  private async append(chunk: Buffer): Promise<void> {
    this.bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.newlines++;
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1]!;
    if (this.failed) return;
    // a chunk larger than the cap keeps only its tail
    const data = chunk.length > this.capBytes ? chunk.subarray(chunk.length - this.capBytes) : chunk;
    this.fh ??= await open(this.file, "w+", 0o600);
    await this.fh.write(data, 0, data.length, this.size);
    this.size += data.length;
    if (this.size >= 2 * this.capBytes) await this.compact();
  }

  /** Keeps the last `capBytes`: copied to a new file that replaces the old one. */
  private async compact(): Promise<void> {
    const old = this.fh!;
    const keep = Buffer.allocUnsafe(this.capBytes);
    const { bytesRead } = await old.read(keep, 0, this.capBytes, this.size - this.capBytes);
    const next = await open(`${this.file}.next`, "w+", 0o600);
    await next.write(keep, 0, bytesRead, 0);
    await rename(`${this.file}.next`, this.file);
    await old.close();
    this.fh = next;
    this.size = bytesRead;
  }

  /** Lines in the whole output (a last line without a newline counts). */
  get lines(): number {
    return this.lastByte === 10 ? this.newlines : this.newlines + 1;
  }
}
