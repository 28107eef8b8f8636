# mcp-admission: build with the full toolchain, ship only dist/ and production dependencies on a
# distroless Node 24 LTS image (no shell, no package manager), as a numeric non-root user.
#
# The bases are build arguments so the same file builds where the public registries cannot be
# reached: `npm run image` (test/e2e/image/) passes bases it makes from Debian's packages and the
# npm registry's Node 24, with the same layout (node and npm on PATH for the build stages; the
# final base's node at /nodejs/bin/node, user 65532, no shell). docs/image.md says more.
# No `# syntax=` line: it would make Docker pull a frontend image before building anything.

ARG NODE_MAJOR=24
ARG BUILD_BASE=docker.io/library/node:${NODE_MAJOR}-bookworm-slim
ARG RUNTIME_BASE=gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot

FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` build needs the sources, copied below. The npm cache is shared
# with the stage below, so the production dependencies are downloaded once.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM ${BUILD_BASE} AS production-dependencies
WORKDIR /src
COPY package.json package-lock.json ./
# The production dependencies, less what nothing at run time reads: their source maps (the
# service runs without --enable-source-maps, and they point at sources most packages do not ship)
# and the tests some packages publish (9 MB, most of it fastify's): a test directory at a
# package's root, and files named *.test.js or *.spec.js.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && find node_modules -name '*.map' -type f -delete \
  && find node_modules -regextype posix-extended -type d \
    -regex '(.*/)?node_modules/(@[^/]+/)?[^/]+/(test|tests|__tests__|spec|specs)' \
    -prune -exec rm -rf '{}' + \
  && find node_modules -regextype posix-extended -type f \
    -regex '.*\.(test|spec)\.[cm]?[jt]s' -delete

FROM ${RUNTIME_BASE}
WORKDIR /app
COPY --from=production-dependencies /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY samples ./samples
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 9443 8081
# The distroless image's entrypoint is node itself; `serve` is the default command. V8 sizes its
# young generation from the host's memory (up to 128 MiB on a large node); 16 MiB semi-spaces keep
# the pod near its request under load at no measured cost in throughput (docs/performance.md).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=16", "--expose-gc", "dist/main.js"]
CMD ["serve"]
