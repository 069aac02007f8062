# byteseek: the tree service on the embedded store.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production \
    KVSPACE=/data \
    BYTESEEK_HOST=0.0.0.0 \
    BYTESEEK_PORT=7411 \
    BYTESEEK_WORKSPACE=/workspace
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/prompts ./prompts
COPY --from=build /app/web ./web
RUN mkdir -p /data /workspace && chown -R node:node /data /workspace
USER node
VOLUME ["/data", "/workspace"]
EXPOSE 7411
# Listening beyond loopback needs a token: run with -e BYTESEEK_TOKEN=...
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.BYTESEEK_PORT||7411)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/cli/byteseek.js", "serve"]
