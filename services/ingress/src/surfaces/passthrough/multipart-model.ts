/** How far into a multipart body gw looks for the `model` field before it stops looking. */
export const MULTIPART_SCAN_LIMIT = 64 * 1024;

/** The boundary of a `multipart/form-data` content type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) return undefined;
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

export interface MultipartHead {
  /** The `model` field's value, when it came before any file part. */
  model?: string;
  /** Where the value sits in `head`, for rewriting it. */
  valueStart?: number;
  valueEnd?: number;
  /** The bytes read so far; they go upstream first. */
  head: Buffer;
  /** The rest of the body, not read yet. */
  rest: AsyncIterator<Uint8Array>;
}

/**
 * Reads the start of a multipart body until the `model` field is found, a file part begins, or
 * MULTIPART_SCAN_LIMIT bytes were read, so that the provider and model are known before anything is sent:
 * a file is never buffered. Clients that put `model` after the file (the OpenAI SDK does) give no model
 * here; the provider then comes from `x-gw-provider` (default openai).
 */
export async function scanMultipartModel(
  body: AsyncIterable<Uint8Array>,
  boundary: string,
): Promise<MultipartHead> {
  const rest = body[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let head = Buffer.alloc(0);
  const delimiter = Buffer.from(`--${boundary}`);
  let position = 0;
  const pull = async (): Promise<boolean> => {
    if (head.length >= MULTIPART_SCAN_LIMIT) return false;
    const next = await rest.next();
    if (next.done) return false;
    chunks.push(Buffer.from(next.value));
    head = Buffer.concat(chunks);
    chunks.length = 0;
    chunks.push(head);
    return true;
  };
  while (true) {
    const start = head.indexOf(delimiter, position);
    const headersEnd = start === -1 ? -1 : head.indexOf('\r\n\r\n', start);
    if (headersEnd === -1) {
      if (await pull()) continue;
      return { head, rest };
    }
    const headers = head.subarray(start, headersEnd).toString('latin1');
    if (/filename\*?=/i.test(headers)) return { head, rest };
    const valueStart = headersEnd + 4;
    const valueEnd = head.indexOf(`\r\n--${boundary}`, valueStart);
    if (valueEnd === -1) {
      if (await pull()) continue;
      return { head, rest };
    }
    if (/\bname="model"/i.test(headers)) {
      return {
        model: head.subarray(valueStart, valueEnd).toString('utf8'),
        valueStart,
        valueEnd,
        head,
        rest,
      };
    }
    position = valueEnd + 2;
  }
}

/** The head with the model's value replaced (the provider prefix removed). */
export function replaceModel(scan: MultipartHead, model: string): Buffer {
  if (scan.valueStart === undefined || scan.valueEnd === undefined) return scan.head;
  return Buffer.concat([
    scan.head.subarray(0, scan.valueStart),
    Buffer.from(model),
    scan.head.subarray(scan.valueEnd),
  ]);
}
