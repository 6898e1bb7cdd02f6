/** What every route handler of the Discord fake works with. */
import type { Gateway } from './gateway.ts';
import type { MessageBudgets } from './limits.ts';
import type { FakeState } from './state.ts';

export interface Ctx {
  state: FakeState;
  gateway: Gateway;
  budgets: MessageBudgets;
}
