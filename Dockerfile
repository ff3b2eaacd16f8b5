# syntax=docker/dockerfile:1
# Builds the same thing as scripts/setup.sh, for container deployment.
# Stage 1 compiles the Rust addon and the TypeScript; stage 2 carries only what runs.

FROM rust:1.88-bookworm AS rust

FROM node:20-bookworm AS build
# The Rust toolchain of the official image, beside Node 20 (napi-rs drives cargo from Node).
COPY --from=rust /usr/local/cargo /usr/local/cargo
COPY --from=rust /usr/local/rustup /usr/local/rustup
ENV CARGO_HOME=/usr/local/cargo RUSTUP_HOME=/usr/local/rustup PATH=/usr/local/cargo/bin:$PATH
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip build-essential pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY scripts/fetch-pdfium.sh scripts/
RUN ./scripts/fetch-pdfium.sh
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY scripts/install-fonts.cjs scripts/
RUN node scripts/install-fonts.cjs /app/vendor/fonts
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY native native
RUN npm run build:native
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY bench bench
RUN npm run build:ts && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends \
      tesseract-ocr tesseract-ocr-eng fonts-liberation fonts-crosextra-carlito fonts-crosextra-caladea \
      fonts-urw-base35 fonts-dejavu-core fonts-ipafont-mincho fonts-ipafont-gothic poppler-data ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /home/pdfedit pdfedit
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/vendor/pdfium vendor/pdfium
COPY --from=build /app/vendor/fonts /usr/local/share/fonts/pdfedit
COPY --from=build /app/native/index.js /app/native/index.d.ts /app/native/package.json native/
COPY --from=build /app/native/*.node native/
COPY bin bin
# Served at GET /source (AGPL-3.0): the engine's source, its worker, its container build
# (Dockerfile.engine) with the files that build copies, and the licence
# (src/source/engine-source.ts lists them).
COPY LICENSE Dockerfile.engine Cargo.toml Cargo.lock package-lock.json tsconfig.json tsconfig.engine.json ./
COPY scripts/fetch-pdfium.sh scripts/
COPY crates crates
COPY native/Cargo.toml native/build.rs native/
COPY native/src native/src
COPY src/engine src/engine
COPY src/kernel/api-error.ts src/kernel/error-codes.ts src/kernel/
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
RUN mkdir -p /data && chown pdfedit /data
USER pdfedit
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
