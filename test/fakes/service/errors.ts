/**
 * OpenAI-style errors of the fake service: `{ error: { message, type, param, code } }` thrown
 * as {@link ApiError} by validation and routing (the server turns them into responses), and
 * the default bodies of canned statuses (`enqueue(route, { status })` without a body).
 */

/** The body of an error response. */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An error the server answers with its status, body and headers. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

/** Builds an {@link ApiError} (type `invalid_request_error` unless given). */
export function apiError(
  status: number,
  message: string,
  param: string | null,
  code: string | null,
  type = 'invalid_request_error',
  headers: Record<string, string> = {},
): ApiError {
  return new ApiError(status, { error: { message, type, param, code } }, headers);
}

/** A 400 `invalid_value` error of one parameter. */
export const invalid = (param: string, message: string) => apiError(400, message, param, 'invalid_value');

/** OpenAI-like default error bodies for canned statuses. */
export function defaultErrorBody(status: number): ErrorBody {
  const e = (message: string, type: string, code: string | null): ErrorBody => ({
    error: { message, type, param: null, code },
  });
  switch (status) {
    case 400:
      return e('Bad request.', 'invalid_request_error', null);
    case 401:
      return e('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    case 403:
      return e('You are not allowed to perform this action.', 'permission_error', 'permission_denied');
    case 404:
      return e('Not found.', 'invalid_request_error', 'not_found');
    case 408:
      return e('Request timed out.', 'timeout', null);
    case 409:
      return e('Conflict.', 'invalid_request_error', null);
    case 422:
      return e('Unprocessable entity.', 'invalid_request_error', null);
    case 429:
      return e('Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded');
    case 500:
      return e('The server had an error while processing your request. Sorry about that!', 'server_error', null);
    case 502:
      return e('Bad gateway.', 'server_error', null);
    case 503:
      return e('The engine is currently overloaded, please try again later.', 'server_error', 'overloaded');
    case 504:
      return e('Gateway timeout.', 'server_error', null);
    default:
      return e(`Error ${status}.`, status >= 500 ? 'server_error' : 'invalid_request_error', null);
  }
}
