import { describe, expect, it } from 'vitest';
import { estimateMessageTokens } from '../../src/core/tokens.ts';

describe('token estimates (§4.1 image input rule 3, §8)', () => {
  it('counts each image as 85 tokens, whatever its size', () => {
    const text = { role: 'user' as const, content: 'abcd'.repeat(10) };
    const small = 'data:image/png;base64,AAAA';
    const large = `data:image/jpeg;base64,${'A'.repeat(400_000)}`;
    const withImages = {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'abcd'.repeat(10) },
        { type: 'image_url' as const, image_url: { url: small } },
        { type: 'image_url' as const, image_url: { url: large } },
      ],
    };
    expect(estimateMessageTokens([withImages]) - estimateMessageTokens([text])).toBe(2 * 85);
  });
});
