import { defineConfig } from 'vitest/config';

/** npm run test:long: the runs too long for npm test (a 30 s mixed load). */
export default defineConfig({
  test: {
    include: ['test/long/**/*.long.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
