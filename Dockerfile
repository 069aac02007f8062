# byteseek: the tree service on the embedded store.
# Build: install once (dev dependencies too, for tsc), build, then drop the dev dependencies; the
# runtime stage copies the result, so npm runs in one stage only.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    KVSPACE=/data \
    BYTESEEK_HOST=0.0.0.0 \
    BYTESEEK_PORT=7411 \
    BYTESEEK_WORKSPACE=/workspace
WORKDIR /app
# bubblewrap: the sandbox every command runs in; socat: its bridge to the egress proxy. The sandbox
# needs user namespaces, which Docker's default seccomp profile refuses: run the image with
# --security-opt seccomp=unconfined (and apparmor=unconfined where AppArmor is on), or commands are
# refused with a message saying so (see the README's security model).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap socat \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prompts ./prompts
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/web/static ./web/static
RUN mkdir -p /data /workspace && chown node:node /data /workspace
USER node
# The store, and the files the agent's tools may touch: mount both (see the README).
VOLUME ["/data", "/workspace"]
EXPOSE 7411
# Listening beyond loopback needs a token: run with -e BYTESEEK_TOKEN=...
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.BYTESEEK_PORT||7411)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/cli/byteseek.js", "serve"]
