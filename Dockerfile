# syntax=docker/dockerfile:1
# bytepath in a slim image: built in the official Rust image, run in Debian slim (glibc, as
# the build), as an unprivileged user. `bytepath server` and `bytepath mesh` need nothing
# else; `--netns` runs (ip from iproute2, root) are not meant for this image.
#
# Both base images are pinned by digest, so a rebuild gets the very same bases. The digests
# are build arguments with no default (a build without them fails at the first FROM): fill
# them with what the registry says the tags point to today, and keep those values with the
# image (deploy/kubernetes/README.md, "Images pinned by digest"):
#   docker build \
#     --build-arg RUST_DIGEST="$(docker buildx imagetools inspect rust:1-slim-bookworm --format '{{json .Manifest.Digest}}' | tr -d '"')" \
#     --build-arg DEBIAN_DIGEST="$(docker buildx imagetools inspect debian:bookworm-slim --format '{{json .Manifest.Digest}}' | tr -d '"')" \
#     -t bytepath:0.1.0 .
ARG RUST_DIGEST
ARG DEBIAN_DIGEST

FROM rust:1-slim-bookworm@${RUST_DIGEST} AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
RUN cargo build --release --locked --bin bytepath

FROM debian:bookworm-slim@${DEBIAN_DIGEST}
COPY --from=build /src/target/release/bytepath /usr/local/bin/bytepath
USER 65532:65532
# bytepath is PID 1 here: it handles SIGTERM and SIGINT itself (the run in progress is
# stopped, its client told, exit 0), so no init shim is needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["bytepath"]
CMD ["--help"]
