/**
 * Where a failure becomes the sentence a user reads, in the bot's words: the service's errors
 * say what went wrong (service/errors.ts); what to do about it with this bot (a command, a
 * setting) is added here, and nowhere else.
 */
import {
  type BadRequestError,
  ContextLengthError,
  InvalidResponseError,
  ServiceError,
  userMessageOf,
} from './service/errors.ts';

/**
 * The service refused image parts for the model (a 400 naming images or vision, §4.1: the
 * model "must support image input if image parts are sent"): the sentence names the setting
 * that chooses the model for requests with images.
 */
export class ImagesNotSupportedError extends ServiceError {
  constructor(
    readonly model: string,
    cause: BadRequestError,
  ) {
    super(
      'bad_request',
      `model ${model} refused image input: ${cause.message}`,
      `The model \`${model}\` does not accept images. An admin can set DEFAULT_VISION_MODEL to a model that does.`,
      { status: cause.status ?? 400, ...(cause.serviceCode ? { serviceCode: cause.serviceCode } : {}), cause },
    );
  }
}

/**
 * The service's `/v1/models` (§4.5) lists no chat model (§2.5: only `type: image` records, or
 * none the bot can read), fetched again once, and no DEFAULT_CHAT_MODEL is set: the sentence
 * says what is missing and the setting that names a model instead. Code `invalid_response`.
 */
export class NoChatModelError extends InvalidResponseError {
  constructor() {
    super(
      'the service lists no chat model',
      'The generation service lists no chat model (only image models, or none). An admin can set DEFAULT_CHAT_MODEL to the model to use.',
    );
  }
}

/**
 * The sentence for a failure (without its reference): a service error's own, with what the user
 * can do here added (a conversation too long for the model: /forget); anything else, the
 * bot's own fault in general words (no detail of it).
 */
export function sentenceOf(error: unknown): string {
  if (error instanceof ContextLengthError)
    return `${error.userMessage} Use /forget to start afresh (or ask a shorter question).`;
  return userMessageOf(error);
}

/**
 * What the user reads when the image results of web search mode "images" (§4.1) could not be
 * posted after the answer (the answer and its history stay): the platform's reason
 * (`ReplyChannel.explain`), or a general one. Without its reference (withReference adds it).
 */
export function imageResultsNotPosted(reason: string | undefined): string {
  return `The answer is kept, but its image results could not be posted: ${reason ?? 'the platform refused them.'}`;
}
