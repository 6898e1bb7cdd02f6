/**
 * Once before the suite: the bot's build (`npm run build`: src/ and commands/ to dist/), which
 * the tests that start the bot as an operator does (`npm start`, test/helpers/bot-process.ts,
 * test/start.test.ts) run. Built here, in vitest's own process before any test file, so that
 * those tests run the code under test and no two workers write dist/ at once.
 * @throws Error with the build's output when it fails (a type error in src/ or commands/).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export default function buildBot(): void {
  try {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: resolve(import.meta.dirname, '..'), stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`npm run build failed:\n${output}`);
  }
}
