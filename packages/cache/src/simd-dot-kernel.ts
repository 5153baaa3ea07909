/**
 * The semantic search's inner loop as a WebAssembly function using 128-bit SIMD: the dot products of one query
 * with `count` rows, written to an output array. Node's JavaScript has no SIMD, and this loop is the whole
 * cost of a semantic lookup; the kernel runs it about 3× faster than the best plain loop (docs/cache.md).
 * It is built here from its opcodes (about 150 bytes) rather than shipped as a binary or taken from a
 * package: nothing to download or build, and the program reads below.
 *
 *   (func (export "dots") (param $query i32) (param $rows i32) (param $count i32) (param $rowBytes i32)
 *                         (param $out i32)
 *     (local $row i32) (local $offset i32) (local $end i32) (local $sum0 v128) (local $sum1 v128)
 *     end = out + count * 4; row = rows
 *     loop while out < end:
 *       sum0 = sum1 = 0; offset = 0
 *       loop:  sum0 += load(query + offset) * load(row + offset)          ; 4 floats
 *              sum1 += load(query + offset + 16) * load(row + offset + 16) ; 4 more
 *              offset += 32; continue while offset < rowBytes
 *       store(out, lanes of sum0 + sum1 added); out += 4; row += rowBytes
 *
 * Rows and the query are padded with zeros to a multiple of 8 floats (`paddedLength`): the loop reads 8 at
 * a time, and zeros add nothing to a dot product. Addresses are byte offsets in the memory the caller gives.
 */

const [QUERY, ROWS, COUNT, ROW_BYTES, OUT, ROW, OFFSET, END, SUM0, SUM1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
const I32 = 0x7f;
const V128 = 0x7b;
const SIMD = 0xfd;

const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const tee = (local: number) => [0x22, local];
const i32Const = (value: number) => [0x41, value];
const [I32_ADD, I32_SHL, I32_LT_U, I32_GE_U, F32_ADD] = [0x6a, 0x74, 0x49, 0x4f, 0x92];
const [BLOCK, LOOP, BR, BR_IF, END_BLOCK, VOID] = [0x02, 0x03, 0x0c, 0x0d, 0x0b, 0x40];
/** f32.store with alignment 2^2, offset 0. */
const F32_STORE = [0x38, 2, 0];
const v128Load = (offset: number) => [SIMD, 0x00, 4, offset];
const V128_ZERO = [SIMD, 0x0c, ...new Array<number>(16).fill(0)];
const F32X4_ADD = [SIMD, 0xe4, 0x01];
const F32X4_MUL = [SIMD, 0xe6, 0x01];
const extractLane = (lane: number) => [SIMD, 0x1f, lane];

/** sum += load(query + offset + byteOffset) * load(row + offset + byteOffset) */
const multiplyAdd = (sum: number, byteOffset: number) => [
  ...get(sum),
  ...get(QUERY),
  ...get(OFFSET),
  I32_ADD,
  ...v128Load(byteOffset),
  ...get(ROW),
  ...get(OFFSET),
  I32_ADD,
  ...v128Load(byteOffset),
  ...F32X4_MUL,
  ...F32X4_ADD,
  ...set(sum),
];

// biome-ignore format: one line of the program per line of code
const body = [
  2, 3, I32, 2, V128, // locals: row, offset, end (i32); sum0, sum1 (v128)
  ...get(OUT), ...get(COUNT), ...i32Const(2), I32_SHL, I32_ADD, ...set(END),
  ...get(ROWS), ...set(ROW),
  BLOCK, VOID, LOOP, VOID,
    ...get(OUT), ...get(END), I32_GE_U, BR_IF, 1,
    ...V128_ZERO, ...set(SUM0), ...V128_ZERO, ...set(SUM1), ...i32Const(0), ...set(OFFSET),
    LOOP, VOID,
      ...multiplyAdd(SUM0, 0), ...multiplyAdd(SUM1, 16),
      ...get(OFFSET), ...i32Const(32), I32_ADD, ...tee(OFFSET), ...get(ROW_BYTES), I32_LT_U, BR_IF, 0,
    END_BLOCK,
    ...get(SUM0), ...get(SUM1), ...F32X4_ADD, ...set(SUM0),
    ...get(OUT),
    ...get(SUM0), ...extractLane(0), ...get(SUM0), ...extractLane(1), F32_ADD,
    ...get(SUM0), ...extractLane(2), F32_ADD, ...get(SUM0), ...extractLane(3), F32_ADD,
    ...F32_STORE,
    ...get(OUT), ...i32Const(4), I32_ADD, ...set(OUT),
    ...get(ROW), ...get(ROW_BYTES), I32_ADD, ...set(ROW),
    BR, 0,
  END_BLOCK, END_BLOCK,
  END_BLOCK,
];

function leb128(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

const name = (text: string) => [...leb128(text.length), ...Buffer.from(text, 'ascii')];
const section = (id: number, content: number[]) => [id, ...leb128(content.length), ...content];

// biome-ignore format: one section per line
const moduleBytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]), // type: (i32 × 5) → ()
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]), // import env.memory, at least 1 page
  ...section(3, [1, 0]), // one function, of type 0
  ...section(7, [1, ...name('dots'), 0x00, 0]), // export it as "dots"
  ...section(10, [1, ...leb128(body.length), ...body]), // its code
]);

/**
 * The part of the WebAssembly global this file uses. TypeScript declares WebAssembly only in its DOM library,
 * which the workspace does not load; Node has it on every version gw runs on.
 */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
const compiled = new wasm.Module(moduleBytes);
const PAGE_BYTES = 65_536;

/** Writes `count` dot products of the query with consecutive rows, as float32, from byte `out` on. */
export type DotsFunction = (
  query: number,
  rows: number,
  count: number,
  rowBytes: number,
  out: number,
) => void;

/** A memory of `floatCount` floats (zeros), and the kernel bound to it; addresses are byte offsets in it. */
export function createDotKernel(floatCount: number): { floats: Float32Array; dots: DotsFunction } {
  const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil((floatCount * 4) / PAGE_BYTES)) });
  const instance = new wasm.Instance(compiled, { env: { memory } });
  return {
    floats: new Float32Array(memory.buffer, 0, floatCount),
    dots: instance.exports['dots'] as DotsFunction,
  };
}

/** A vector length padded for the kernel: a multiple of 8 floats (32 bytes). */
export function paddedLength(dimensions: number): number {
  return Math.ceil(dimensions / 8) * 8;
}
