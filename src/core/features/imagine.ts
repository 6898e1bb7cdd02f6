/**
 * The image feature: prompt → image generation (§4.3) → the image posted as an attachment.
 */
import type { CommandContext } from '../platform.ts';
import type { Core } from '../core.ts';
import { imagesFromResult } from '../media/images.ts';
import type { AspectRatio, ImageStyle } from '../service/schemas.ts';

/** An image request from a user. */
export interface ImagineRequest {
  prompt: string;
  aspectRatio?: AspectRatio;
  style?: ImageStyle;
}

/** File extension for a sharp format name. */
function extensionOf(format: string): string {
  return format === 'jpeg' ? 'jpg' : format;
}

/** The prompt as a caption: one paragraph, at most 1,500 characters (fits every platform). */
function caption(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  return flat.length > 1500 ? `${flat.slice(0, 1499)}…` : flat;
}

/**
 * Generates the image and posts it with a caption naming the prompt and settings.
 * @throws ServiceError subclasses (runCommand tells the user).
 */
export async function imagine(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  await ctx.reply.defer();
  const model = core.models.imageModel();
  const aspectRatio = request.aspectRatio ?? 'square';
  const result = await core.service.images.generate(
    {
      prompt: request.prompt,
      aspect_ratio: aspectRatio,
      ...(request.style ? { style: request.style } : {}),
      ...(model ? { user_selected_model: model } : {}),
      // One round trip: the bytes come inline instead of through the view endpoint.
      response_format: 'b64_json',
    },
    { signal: ctx.signal },
  );
  const [image] = await imagesFromResult(result, core.service.images, { expected: aspectRatio, log: ctx.log, signal: ctx.signal });
  if (!image) throw new Error('image result held no image');
  const settings = [aspectRatio, request.style, model].filter(Boolean).join(' · ');
  await ctx.reply.send({
    content: `🎨 ${caption(request.prompt)}\n_${settings} · ${image.width}×${image.height}_`,
    files: [{ name: `imagine.${extensionOf(image.format)}`, data: image.data, mimeType: image.mimeType, description: request.prompt.slice(0, 1000) }],
  });
}
