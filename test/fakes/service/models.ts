/**
 * `GET /v1/models` (§2.5) and the lookups of chat models that chat and text completions share:
 * an unknown model is 404 `model_not_found`, an image model is refused, vision is per model.
 */
import type { ServerResponse } from 'node:http';
import { CREATED } from './constants.ts';
import { apiError, invalid } from './errors.ts';
import { sendJson } from './respond.ts';
import type { ServiceState } from './state.ts';
import type { FakeModel, FakeRoute } from './types.ts';
import { clip } from './validation.ts';

/** Answers `GET /v1/models`: `{ object: 'list', data: [{ id, object: 'model', created, owned_by, ...extra }] }`. */
export function handleModels(state: ServiceState, route: FakeRoute, path: string, res: ServerResponse): void {
  const data = state.models.map(({ id, ...rest }) => ({
    id,
    object: 'model',
    created: CREATED,
    owned_by: 'fake-service',
    ...rest,
  }));
  sendJson(state, res, route, path, 200, { object: 'list', data });
}

/** Ids of the listed chat models that take images. */
export function visionModelIds(state: ServiceState): string[] {
  return state.models.filter((m) => m.vision === true && m.type !== 'image').map((m) => m.id);
}

/** The listed language model of this id (404 when unknown, 400 for an image model). */
export function chatModel(state: ServiceState, id: string): FakeModel {
  const model = state.models.find((m) => m.id === id);
  if (!model) {
    throw apiError(
      404,
      `The model '${clip(id)}' does not exist or you do not have access to it.`,
      'model',
      'model_not_found',
    );
  }
  if (model.type === 'image') {
    throw invalid(
      'model',
      `Invalid 'model': '${id}' is an image model; chat and text completions need a language model from /v1/models.`,
    );
  }
  return model;
}
