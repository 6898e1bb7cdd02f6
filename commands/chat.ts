/**
 * `/chat prompt [model] [image] [web_search] [json] [temperature] [max_tokens] [top_p]
 * [frequency_penalty] [presence_penalty] [thread]`: ask the language model; the answer streams into
 * the reply, and the exchange joins the channel's (or thread's) history. `image` is looked at
 * with the channel's vision model; a text file or PDF given to it is read as context (media/files.ts).
 * `thread` (Discord; or the channel's `auto_thread`): the adapter opens a thread on the question
 * and the answer streams there (`opensThread`); on Slack a channel /chat is answered in its
 * question's thread always, so the option changes nothing there.
 */
import type { Command } from '../src/core/command.ts';
import { choice, texts } from '../src/core/command-words.ts';
import { chat } from '../src/core/features/chat.ts';
import { imageRefsOf } from '../src/core/features/kept-request.ts';
import {
  MAX_TOKENS_OPTION,
  NUCLEUS_OPTIONS,
  samplingFrom,
  stringOption,
  TEMPERATURE_OPTION,
  TEXT_MODEL_OPTION,
} from '../src/core/features/options.ts';
import { subjectOf } from '../src/core/features/usage.ts';
import { english } from '../src/core/i18n/words.ts';
import { looksLikeImage, optionImage } from '../src/core/media/attachments.ts';
import { fileLimits, optionFile } from '../src/core/media/files.ts';
import { WEB_SEARCH_MODES } from '../src/core/service/schemas.ts';

type WebSearch = (typeof WEB_SEARCH_MODES)[number];

export default {
  name: 'chat',
  ...texts('commands.command.chat'),
  // On Slack the question is shown to the channel, and answered in its thread.
  showsQuestion: true,
  // The answer streams in for everyone: Discord's deferral starts before the quota, image and store work.
  defersAtOnce: true,
  // Discord: `thread:true` (or the channel's auto_thread) answers in a new thread on the question.
  opensThread: true,
  options: [
    {
      name: 'prompt',
      ...texts('commands.command.chat.options.prompt'),
      type: 'string',
      required: true,
      maxLength: 6000,
    },
    TEXT_MODEL_OPTION,
    // Named `image` since before files were read (renaming it would break the deployed command).
    { name: 'image', ...texts('commands.command.chat.options.image'), type: 'attachment' },
    {
      name: 'web_search',
      ...texts('commands.command.chat.options.web_search'),
      type: 'string',
      choices: (['off', ...WEB_SEARCH_MODES] as const).map((value) =>
        choice(value, `commands.command.chat.options.web_search.choices.${value}`),
      ),
    },
    { name: 'json', ...texts('commands.command.chat.options.json'), type: 'boolean' },
    TEMPERATURE_OPTION,
    MAX_TOKENS_OPTION,
    ...NUCLEUS_OPTIONS,
    {
      name: 'thread',
      ...texts('commands.command.chat.options.thread'),
      type: 'boolean',
    },
  ],
  examples: [
    'Explain RAID 5 in two sentences',
    'Write a haiku about rain --temperature 1.2 --max_tokens 60',
    'List three colours --json',
  ],
  async execute(ctx, core) {
    const { prompt, web_search, json } = ctx.options;
    const sampling = samplingFrom(ctx.options, core);
    const model = stringOption(ctx.options, 'model');
    const file = ctx.files.image;
    const work = { images: core.images, pdfs: core.pdfs, key: subjectOf(ctx), signal: ctx.signal };
    const images = file && looksLikeImage(file) ? [await optionImage('image', file, core.inputImages, work)] : [];
    const { files, notes } =
      file && !looksLikeImage(file)
        ? await optionFile('image', file, fileLimits(core.limits, core.inputImages.maxBytes, String(prompt)), work)
        : { files: [], notes: [] };
    const noteLines = notes.map((n) => english.say(n));
    // Returned, not awaited: this frame is not kept for as long as the answer streams.
    return chat(ctx, core, {
      prompt: String(prompt),
      sampling,
      images,
      // A Slack file link names a file Regenerate finds again; Discord's upload has no lasting place (kept whole).
      imageRefs: imageRefsOf(images, file ? [file] : []),
      files,
      notes: noteLines,
      ...(model ? { model } : {}),
      ...(typeof web_search === 'string' && web_search !== 'off' ? { webSearch: web_search as WebSearch } : {}),
      ...(json === true ? { json: true } : {}),
    });
  },
} satisfies Command;
