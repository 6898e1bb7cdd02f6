/**
 * Post-processing of a finished answer: JSON mode (§4.1 JSON mode rules 1–3) and the inline
 * image results of web search mode "images" (§4.1 web search modes).
 */
import { InvalidJsonError } from '../service/errors.ts';

/**
 * Parses a JSON-mode answer. The streamed pieces must be joined first (rule 3): pass the
 * whole text. A Markdown fence around the JSON (```json … ```) is tolerated.
 * @returns the value and its pretty-printed form (2-space indent).
 * @throws InvalidJsonError keeping `raw` for the user.
 */
export function parseJsonAnswer(raw: string): { value: unknown; pretty: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(raw);
  const text = fenced ? fenced[1]! : raw;
  try {
    const value: unknown = JSON.parse(text);
    return { value, pretty: JSON.stringify(value, null, 2) };
  } catch (cause) {
    throw new InvalidJsonError(raw, cause);
  }
}

/** An image found in an answer. */
export interface ImageLink {
  url: string;
  alt: string;
}

const MARKDOWN_IMAGE = /!\[([^\]]*)\]\((https?:\/\/[^\s)]+)(?:\s+"[^"]*")?\)/g;
const BARE_IMAGE_URL = /(?<![(\w])(https?:\/\/[^\s<>()"']+?\.(?:png|jpe?g|gif|webp|avif)(?:\?[^\s<>()"',]*)?)(?=[\s)>"',.]|$)/gi;

/**
 * Finds the image results in an answer of web search mode "images": Markdown images
 * `![alt](url)` and bare http(s) links ending in an image extension. Duplicates removed,
 * order kept.
 */
export function extractImageLinks(text: string): ImageLink[] {
  const seen = new Set<string>();
  const out: ImageLink[] = [];
  const add = (url: string, alt: string) => {
    if (seen.has(url)) return;
    seen.add(url);
    out.push({ url, alt });
  };
  for (const m of text.matchAll(MARKDOWN_IMAGE)) add(m[2]!, m[1]!);
  const withoutMarkdown = text.replace(MARKDOWN_IMAGE, ' ');
  for (const m of withoutMarkdown.matchAll(BARE_IMAGE_URL)) add(m[1]!, '');
  return out;
}
