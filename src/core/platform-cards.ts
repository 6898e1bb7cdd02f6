/** Cards (titled lists of fields) the core asks a platform to show, and how much of them one message may carry: part of the seam (platform.ts). */

/**
 * A titled list of name/value fields (Discord: an embed; Slack: a header and section blocks).
 * Callers keep within {@link CardLimits}; adapters do not cut.
 */
export interface Card {
  title: string;
  description?: string;
  fields: Array<{ name: string; value: string }>;
  /** A short line under the fields (e.g. "page 2 of 3"). */
  footer?: string;
}

/** How much card content one message may carry on a platform. */
export interface CardLimits {
  /** Fields in one message (Discord: 25 per embed; Slack: within 50 blocks). */
  maxFields: number;
  /** Characters of titles, names, values and footers in one message (Discord: 6,000). */
  maxChars: number;
  /** Longest field value, in characters (Discord: 1,024). */
  maxValueChars: number;
  /** `buttons`: one message paged with Previous/Next; `messages`: every page posted in turn. */
  paging: 'buttons' | 'messages';
}
