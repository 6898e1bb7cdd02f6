/**
 * What a user can press in a message's blocks (interactivity.ts): an `actions` block's buttons,
 * a section's button accessory, and the two buttons of a `feedback_buttons` element in a
 * `context_actions` block (the element's `action_id`, each button its own `value` and `text`,
 * the press's `type` being `feedback_buttons`). Every block has a `block_id` as Slack returns it:
 * the app's, or one Slack generates.
 */
import { createHash } from 'node:crypto';
import type { FakeSlackMessage } from './types.ts';
import { isObject, type Json } from './wire.ts';

/** What carries a button: a stored message or an ephemeral one. */
export type Holder = Pick<FakeSlackMessage, 'channel' | 'ts' | 'threadTs' | 'blocks'>;

/** The block_id Slack would have generated for block `index` of a message (stable across presses). */
function generatedBlockId(m: Holder, index: number): string {
  // Letters and digits only (Slack's own look like `uU2Dx`): a generated id never holds `-` or `_`.
  return createHash('sha256')
    .update(`${m.channel}/${m.ts}/${index}`)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 5);
}

/** The message's blocks as Slack returns them: every block with a block_id. */
export function blocksWithIds(m: Holder): unknown[] | undefined {
  return m.blocks?.map((block, i) =>
    isObject(block) && block.block_id === undefined ? { ...block, block_id: generatedBlockId(m, i) } : block,
  );
}

/**
 * Every button of a message, with its block's id; a `feedback_buttons` element counts as its two
 * buttons, each `{ type: 'feedback_buttons', action_id, value, text }` (the element's action_id).
 */
export function buttonsOf(m: Holder): Array<{ blockId: string; button: Json }> {
  const found: Array<{ blockId: string; button: Json }> = [];
  (blocksWithIds(m) ?? []).forEach((block) => {
    if (!isObject(block)) return;
    const blockId = String(block.block_id);
    if (block.type === 'context_actions' && Array.isArray(block.elements)) {
      for (const e of block.elements) found.push(...feedbackButtonsOf(e).map((button) => ({ blockId, button })));
      return;
    }
    const elements =
      block.type === 'actions' && Array.isArray(block.elements)
        ? block.elements
        : block.type === 'section' && isObject(block.accessory)
          ? [block.accessory]
          : [];
    for (const e of elements) if (isObject(e) && e.type === 'button') found.push({ blockId, button: e });
  });
  return found;
}

/** The two buttons of a `feedback_buttons` element (none for another element). */
function feedbackButtonsOf(element: unknown): Json[] {
  if (!isObject(element) || element.type !== 'feedback_buttons') return [];
  return [element.positive_button, element.negative_button].filter(isObject).map((b) => ({
    type: 'feedback_buttons',
    action_id: element.action_id,
    value: b.value,
    text: b.text,
  }));
}
