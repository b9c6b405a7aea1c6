# syntax=docker/dockerfile:1
#
# The operator's container image, for people who build with Docker. Multi-arch:
#   docker buildx build --platform linux/amd64,linux/arm64 -t openfga-operator:dev .
# Without a Docker engine, build the same layout with Jib: ./mvnw -Pimage verify -DskipTests (docs/image.md).
#
# Base images are pinned to exact versions here; the release workflow (.github/workflows/
# release.yml) resolves each to its digest and passes `--build-arg NAME=image:tag@sha256:...`,
# so a published image names exactly what it was built from. distroless publishes no version tags,
# only `nonroot`: the digest is its pin.
ARG MAVEN_IMAGE=maven:3.9.11-eclipse-temurin-25
ARG JDK_IMAGE=eclipse-temurin:25.0.3_9-jdk-noble
ARG RUNTIME_IMAGE=gcr.io/distroless/base-debian12:nonroot

# 1. The shaded jar, built once on the build machine's own platform (bytecode runs on any).
FROM --platform=$BUILDPLATFORM ${MAVEN_IMAGE} AS jar
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY src/main/ src/main/
# ./mvnw installs the Maven version the project pins, through the image's own mvn
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -q -Dmaven.test.skip=true package

# 2. The Java runtime, jlink'd for the target platform: this stage has no --platform, so it runs
#    on TARGETPLATFORM (under emulation when that is not the build machine's) with that
#    platform's JDK. Same script and JVM flags as the Jib image; distroless brings the C library.
FROM ${JDK_IMAGE} AS runtime
ARG TARGETARCH
WORKDIR /build
COPY --from=jar /src/target/openfga-operator-all.jar ./
COPY src/main/image/ ./image/
RUN echo "runtime for ${TARGETARCH}" \
 && bash image/build-runtime.sh --jdk "$JAVA_HOME" --jar openfga-operator-all.jar \
      --options-dir image --out /out

# 3. distroless base: glibc, CA certificates, /etc/passwd with nonroot (65532), /tmp; no shell.
FROM ${RUNTIME_IMAGE}
COPY --from=runtime /out/runtime/opt/java/ /opt/java/
COPY --from=runtime /out/app/ /app/
USER 65532:65532
WORKDIR /app
ENTRYPOINT ["/opt/java/bin/java", "@/app/jvm.options", "-jar", "/app/openfga-operator.jar"]
