import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { prepareImageInput } from '../../src/core/media/image-ops.ts';
import { decodeHxd, ImageInputError } from '../../src/core/media/images.ts';

const solid = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({
    create: { width, height, channels, background: channels === 4 ? { r: 10, g: 20, b: 30, alpha: 0.5 } : '#336699' },
  });

async function decoded(url: string) {
  const [, mime, b64] = /^data:(image\/(?:jpeg|png));base64,(.*)$/.exec(url)!;
  return { mime, meta: await sharp(Buffer.from(b64!, 'base64')).metadata() };
}

describe('prepareImageInput (§4.1 image input rules)', () => {
  it.each([
    ['webp', () => solid(2048, 1024).webp().toBuffer()],
    ['gif', () => solid(300, 200).gif().toBuffer()],
    ['avif', () => solid(1500, 1500).avif().toBuffer()],
    ['tiff', () => solid(640, 480).tiff().toBuffer()],
    ['png without alpha', () => solid(800, 600).png().toBuffer()],
  ])('turns %s into a JPEG data URL with the longest side at most 1024 px', async (_name, make) => {
    const input = await make();
    const image = await prepareImageInput(input, 'photo');
    const { mime, meta } = await decoded(image.url);
    expect(mime).toBe('image/jpeg');
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1024);
    expect([image.width, image.height]).toEqual([meta.width, meta.height]);
  });

  it('takes the first frame of an animated GIF', async () => {
    const red = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const blue = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#0000ff' } })
      .png()
      .toBuffer();
    const gif = await sharp([red, blue], { join: { animated: true } })
      .gif()
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(2);
    const image = await prepareImageInput(gif, 'anim.gif');
    const { meta } = await decoded(image.url);
    expect([meta.width, meta.height, meta.pages ?? 1]).toEqual([64, 32, 1]);
    const [, , b64] = /^data:(image\/(?:jpeg|png));base64,(.*)$/.exec(image.url)!;
    const { channels } = await sharp(Buffer.from(b64!, 'base64')).stats();
    expect(channels[0]!.mean).toBeGreaterThan(200); // the red first frame, not the blue second
    expect(channels[2]!.mean).toBeLessThan(50);
  });

  it('keeps transparency as PNG', async () => {
    const image = await prepareImageInput(await solid(200, 100, 4).png().toBuffer(), 'logo.png');
    const { mime, meta } = await decoded(image.url);
    expect(mime).toBe('image/png');
    expect(meta.hasAlpha).toBe(true);
  });

  it('applies EXIF orientation (a 6 = rotate 90° marks a landscape file as portrait)', async () => {
    const input = await solid(400, 200).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const image = await prepareImageInput(input, 'phone.jpg');
    expect([image.width, image.height]).toEqual([200, 400]);
  });

  it('refuses an oversized file and a decompression bomb with a clear message', async () => {
    await expect(prepareImageInput(new Uint8Array(1024), 'big.bin', { maxBytes: 100, maxPixels: 1e6 })).rejects.toThrow(
      /big.bin is too large \(0.0 MB/,
    );
    const bomb = await solid(4000, 4000).png({ compressionLevel: 9 }).toBuffer();
    const refused = prepareImageInput(bomb, 'bomb.png', { maxBytes: 50e6, maxPixels: 1_000_000 });
    await expect(refused).rejects.toBeInstanceOf(ImageInputError);
    await expect(refused).rejects.toThrow('bomb.png is too large to process (4000×4000 px; at most 1 megapixels).');
  });

  it('refuses bytes that are not an image', async () => {
    await expect(prepareImageInput(Buffer.from('<html>login</html>'), 'file.png')).rejects.toThrow(
      /not an image the bot can read/,
    );
  });
});

describe('decodeHxd (shape not shown in §4.3)', () => {
  it('accepts hex, 0x-hex, base64 and data URLs', () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    expect(decodeHxd('89504e47')).toEqual(bytes);
    expect(decodeHxd('0x89504E47')).toEqual(bytes);
    expect(decodeHxd(bytes.toString('base64'))).toEqual(bytes);
    expect(decodeHxd(`data:image/png;base64,${bytes.toString('base64')}`)).toEqual(bytes);
  });
});
