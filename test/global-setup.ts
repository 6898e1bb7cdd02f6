/**
 * Once before the suite: the bot's build (`npm run build`: src/ and commands/ to dist/), which
 * the tests that start the bot as an operator does (`npm start`, test/helpers/bot-process.ts,
 * test/start.test.ts) run. Built here, in vitest's own process before any test file, so that
 * those tests run the code under test and no two workers write dist/ at once.
 * @throws Error with tsc's output when the build fails (a type error in src/ or commands/).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export default function buildBot(): void {
  const root = resolve(import.meta.dirname, '..');
  try {
    execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`npm run build failed:\n${output}`);
  }
}
