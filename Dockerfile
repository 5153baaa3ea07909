# One image for every service: the Deployment's args pick the entry point (services/<name>/src/main.ts),
# the default is the embedded gateway. Node 24 runs the TypeScript directly; the install's postinstall builds the
# web UI (packages/ui, Vite) into packages/ui/dist, which the admin serves at /ui.
FROM node:24-slim
WORKDIR /app
RUN npm install -g pnpm@12
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages ./packages
COPY services ./services
COPY proto ./proto
COPY src ./src
RUN pnpm install --frozen-lockfile --prod && rm -rf /root/.cache /root/.npm
USER 10001
ENV NODE_ENV=production GW_HOST=0.0.0.0 PORT=8080
EXPOSE 8080
CMD ["node", "src/embedded.ts"]
