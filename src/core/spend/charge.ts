/** A request's money as the features settle it (features/spend.ts makes one; usage.ts and imagine-post.ts settle it). */

/**
 * A request's money reserved before it is sent (state/spend.ts): settled once, later calls do
 * nothing. Never throws.
 */
export interface Charge {
  /** Settles a text answer to the cost of its tokens (`estimated`: the bot's own count, the service sent no `usage`). */
  settleTokens(prompt: number, completion: number, estimated: boolean): Promise<void>;
  /** Settles an image request: one image when `made`, else nothing. */
  settleImage(made: boolean): Promise<void>;
  /** Gives the reservation back when nothing was settled (nothing was generated). */
  release(): Promise<void>;
}
