/**
 * The Stop button of streaming answers. Each answer that streams registers how to abort its
 * request to the service and who asked; its messages carry a button `stop:<id>` until the
 * final write. A press by the requester or an admin aborts the request with a user
 * {@link StopRequest}: the connection to the service closes at once, the answer keeps its
 * partial text with a "Stopped." note, and the partial answer joins the history marked as
 * stopped. Anyone else is told that only the asker or an admin may stop it.
 *
 * A press is checked against the requester the bot stored when the answer began (and the
 * presser's admin rights now), never against what the button's id says: the id
 * (`stop:<id>:<user id>`) only lets a process that does not run the answer turn away an
 * obvious stranger at once. Presses reach the process that runs the answer on Discord (the
 * shard that owns the guild); on Slack, with several instances behind a load balancer, any one
 * of them — so with a shared store (Redis) a press that finds no local answer leaves a stop
 * request there naming the presser (and whether they are an admin), which the owning process
 * looks for once a second and checks against its stored requester before stopping.
 */
import type { Languages } from '../i18n/languages.ts';
import { english, type Words } from '../i18n/words.ts';
import { randomHex } from '../ids.ts';
import { buttonId, storeKeys, workspaceOf } from '../keys.ts';
import type { Button, ComponentContext } from '../platform.ts';
import { StopRequest } from '../running.ts';
import { keepOwned } from '../state/owned.ts';
import type { StateStore } from '../state/store.ts';

/** The button's id prefix: `stop:<id>:<requester>`. */
export const STOP_BUTTON = 'stop';

/** How often an answer looks in a shared store for a press made on another process, in ms. */
const STOP_POLL_MS = 1_000;

/** How long a stop request left in the store for another process is kept, in ms. */
const STOP_REQUEST_TTL_MS = 20 * 60_000;

/** What a press left for the process that runs the answer: who pressed, and whether they were an admin then. */
interface StopRequestRecord {
  by: string;
  admin: boolean;
}

/** An answer to register (answer-session.ts's session): who asked (a platform user id), and its abort (a press's). */
export interface OpenAnswer {
  readonly requesterId: string;
  abort(reason: StopRequest): void;
}

/** A registered answer: its button and how to unregister it. */
export interface StopHandle {
  /** The Stop button to show while the answer streams. */
  button: Button;
  /** True once stopped (by a press here or a request found in the store). */
  readonly stopped: boolean;
  /** Unregisters (the answer is over). Idempotent. */
  close(): void;
}

/** The answers of this process that can be stopped. */
export class StopButtons {
  private readonly open = new Map<string, Registration>();
  /** Looks in a shared store for presses made on other processes, once a second for all open answers. */
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;

  /**
   * @param store where presses for answers of other processes are left (shared stores only matter).
   * @param languages whose words a presser is told in (theirs); English when absent.
   */
  constructor(
    private readonly store?: StateStore,
    private readonly languages?: Pick<Languages, 'forUser'>,
  ) {}

  /** Answers that can be stopped now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Registers an answer.
   * @param answer `requesterId`: the platform user id who asked; `abort`: cancels its request.
   * @param words the place's (the button's label is public); English when absent.
   */
  register(answer: OpenAnswer, words: Words = english): StopHandle {
    const registration = new Registration(this, randomHex(9), answer, words.t('answers.stop.button'));
    this.open.set(registration.id, registration);
    if (this.store?.kind === 'redis' && !this.pollTimer) {
      this.pollTimer = setInterval(() => void this.poll(), STOP_POLL_MS);
      this.pollTimer.unref();
    }
    return registration;
  }

  /** Unregisters an answer (its registration's `close`). */
  unregister(id: string): void {
    this.open.delete(id);
    if (this.open.size === 0) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  /** Reads the stop requests of every open answer in one round trip (`getMany`); aborts those found. */
  private async poll(): Promise<void> {
    if (this.polling || this.open.size === 0) return;
    this.polling = true;
    const ids = [...this.open.keys()];
    try {
      const found = await this.store!.keyv.getMany<StopRequestRecord>(ids.map((id) => storeKeys.stopRequest(id)));
      ids.forEach((id, i) => {
        const request = found[i];
        const answer = this.open.get(id);
        if (!request || !answer) return;
        if (request.by === answer.requesterId || request.admin === true) answer.abort(new StopRequest('user'));
      });
    } catch {
      // The store being down costs only presses made on other processes.
    } finally {
      this.polling = false;
    }
  }

  /**
   * Handles a press of `stop:<id>:<requester>` (`ctx.args` = [id, requester]): the requester
   * stored with the answer, or an admin, stops it; anyone else is told why not, in the presser's
   * words (ephemeral). The press is acknowledged without a message change: the answer's final
   * write removes the button.
   */
  async press(ctx: ComponentContext): Promise<void> {
    const [id = '', namedRequester = ''] = ctx.args;
    const answer = this.open.get(id);
    // The requester stored here when the answer began; the id's only when the answer runs elsewhere.
    const requesterId = answer?.requesterId ?? namedRequester;
    const admin = requesterId === ctx.user.id ? false : await ctx.user.isAdmin();
    if (requesterId !== ctx.user.id && !admin) {
      await ctx.sendEphemeral((await this.wordsOf(ctx)).t('answers.stop.not_yours'));
      return;
    }
    if (answer) {
      answer.abort(new StopRequest('user'));
      await ctx.acknowledge();
      return;
    }
    // Not here: with a shared store the answer may run in another process, which checks the
    // presser against the requester it stored before stopping.
    if (this.store?.kind === 'redis') {
      const request: StopRequestRecord = { by: ctx.user.id, admin };
      const key = storeKeys.stopRequest(id);
      await keepOwned(this.store, workspaceOf(ctx.conversationId), key, request, STOP_REQUEST_TTL_MS);
      await ctx.acknowledge();
      return;
    }
    await ctx.sendEphemeral((await this.wordsOf(ctx)).t('answers.stop.not_running'));
  }

  /** The presser's words (what only they see). */
  private wordsOf(ctx: ComponentContext): Promise<Words> {
    return this.languages ? this.languages.forUser(ctx) : Promise.resolve(english);
  }
}

/** A registered answer: its Stop button, who asked, and its abort (once: later presses do nothing). */
class Registration implements StopHandle {
  readonly button: Button;
  readonly requesterId: string;
  private aborted = false;

  constructor(
    private readonly buttons: StopButtons,
    readonly id: string,
    private readonly open: OpenAnswer,
    label: string,
  ) {
    this.requesterId = open.requesterId;
    this.button = { id: buttonId(STOP_BUTTON, id, open.requesterId), label, style: 'danger' };
  }

  get stopped(): boolean {
    return this.aborted;
  }

  abort(reason: StopRequest): void {
    if (this.aborted) return;
    this.aborted = true;
    this.open.abort(reason);
  }

  close(): void {
    this.buttons.unregister(this.id);
  }
}
