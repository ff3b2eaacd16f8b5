import { once } from 'node:events';
import { createDeflate, deflateSync } from 'node:zlib';

/** A one-page PDF around `page` (its dictionary's extra keys) and extra objects from 5 on. */
function pdfOf(pageExtra: string, content: Buffer, contentDict: string, objects: string[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(buf);
    length += buf.length;
  };
  const obj = (n: number, body: Buffer | string, stream?: Buffer) => {
    offsets[n] = length;
    push(`${n} 0 obj\n`);
    push(body);
    if (stream) {
      push('\nstream\n');
      push(stream);
      push('\nendstream');
    }
    push('\nendobj\n');
  };
  push('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  obj(3, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ${pageExtra} /Contents 4 0 R >>`);
  obj(4, `<< /Length ${content.length} ${contentDict} >>`, content);
  objects.forEach((o, i) => {
    const [dict, stream] = o.split('\nstream\n') as [string, string | undefined];
    obj(5 + i, dict, stream === undefined ? undefined : Buffer.from(stream, 'latin1'));
  });
  const count = 5 + objects.length;
  const xref = length;
  push(`xref\n0 ${count}\n0000000000 65535 f \n`);
  for (let n = 1; n < count; n++) push(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  push(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/**
 * A page painted by one function-based shading whose PostScript function runs `ops`
 * operators per pixel (issue 21's first attack): a few hundred bytes, seconds of CPU per
 * render at preview widths.
 */
export function expensiveShadingPdf(ops = 4000): Buffer {
  const body = `{ add 2 div ${'dup mul '.repeat(Math.ceil(ops / 2))}}`;
  const fn = `<< /FunctionType 4 /Domain [0 1 0 1] /Range [0 1] /Length ${body.length} >>\nstream\n${body}`;
  const shading =
    '<< /ShadingType 1 /ColorSpace /DeviceGray /Domain [0 1 0 1] /Matrix [612 0 0 792 0 0] /Function 6 0 R >>';
  return pdfOf('/Resources << /Shading << /Sh0 5 0 R >> >>', Buffer.from('/Sh0 sh\n'), '', [shading, fn]);
}

async function deflateRepeated(chunk: Buffer, times: number): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (d: Buffer) => out.push(d));
  const ended = once(z, 'end');
  for (let i = 0; i < times; i++) if (!z.write(chunk)) await once(z, 'drain');
  z.end();
  await ended;
  return Buffer.concat(out);
}

/**
 * A page whose content stream is Flated twice and inflates to `mib` MiB of spaces (issue
 * 21's decompression bomb, scaled to the ceiling under test): a few KiB on the wire.
 */
export async function flateBombPdf(mib: number): Promise<Buffer> {
  const inner = await deflateRepeated(Buffer.alloc(1024 * 1024, 0x20), mib);
  const outer = deflateSync(inner, { level: 9 });
  return pdfOf('', outer, '/Filter [/FlateDecode /FlateDecode]', []);
}
