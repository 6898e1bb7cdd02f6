# syntax=docker/dockerfile:1
# The bot as a container: dependencies installed and the bot built in one stage (sqlite3
# compiles with node-gyp; tsc turns src/ and commands/ into dist/, then the dev dependencies
# are pruned), run as the unprivileged `node` user in a slim one. Configuration comes from the environment
# (see .env.example); the SQLite store lives in the /app/data volume (or set STORE_URL=redis://…).
# Node 24, the active long-term release (supported to 2028-04-30; the suite runs on it in CI),
# in both stages: sqlite3 is built by the same release that runs it.

FROM node:24-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
# npm ci builds dist/ (the `prepare` script: npm run build).
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim
# V8 collects lazily under a large heap limit: at 1,000 concurrent answers the bot holds ~90 MB
# of live data but grows past 500 MB RSS without a cap, ~330 MB with it; a 32 MB young generation
# keeps a burst's scavenges few (npm run bench:streams; npm start sets the same defaults). Raise
# the old space (NODE_OPTIONS) for more concurrent answers.
ENV NODE_ENV=production HTTP_PORT=9464 SLACK_PORT=3000 NODE_OPTIONS="--max-old-space-size=384 --max-semi-space-size=32"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
COPY package.json ./
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME /app/data
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.HTTP_PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself (docker stop): running answers get SHUTDOWN_GRACE_MS;
# and SIGHUP (docker kill --signal=HUP): the configuration is reloaded (docs/operator-guide.md, "Reloading the configuration").
CMD ["node", "dist/src/main.js"]
