#!/usr/bin/env bash
# A real Apache Kafka 4 broker for rowprobe's interop test and benchmarks, on loopback only.
#
#   scripts/kafka-broker.sh fetch                 # Maven artifacts -> $KAFKA_CACHE (once, ~15 s)
#   scripts/kafka-broker.sh start DIR PORT        # KRaft broker+controller; data and log in DIR
#   scripts/kafka-broker.sh stop DIR              # SIGTERM, waits for a clean shutdown
#   scripts/kafka-broker.sh status PORT           # exit 0 when something listens on the port
#
# Artifacts: org.apache.kafka:kafka_2.13 (KAFKA_VERSION, default 4.4.0) and its runtime
# dependencies, plus log4j-core and the log4j binding of SLF4J 1.7 (the version Kafka 4 uses) (Kafka's poms bring no logging
# back end), copied by `mvn dependency:copy-dependencies` from a throwaway pom into
# $KAFKA_CACHE/lib (default ~/.cache/rowprobe/kafka-$KAFKA_VERSION). Needs java (17+) and mvn.
# Exit codes: 0 ok, 3 java/mvn/artifacts not available (callers skip), 1 any other failure.
set -euo pipefail

KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
LOG4J_VERSION=${LOG4J_VERSION:-2.24.3}
KAFKA_CACHE=${KAFKA_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/rowprobe/kafka-$KAFKA_VERSION}
LIB=$KAFKA_CACHE/lib

die() { echo "kafka-broker.sh: $*" >&2; exit 1; }
unavailable() { echo "kafka-broker.sh: $*" >&2; exit 3; }

need_java() {
    command -v java >/dev/null || unavailable "java not found (Debian: apt-get install openjdk-17-jre-headless)"
}

fetch() {
    if [[ -f $LIB/.complete ]]; then echo "$LIB"; return 0; fi
    need_java
    command -v mvn >/dev/null || unavailable "mvn not found (Debian: apt-get install maven)"
    local work
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rowprobe.test</groupId><artifactId>kafka-broker</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId><version>$LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
POM
    mkdir -p "$LIB"
    if ! mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$LIB" >"$work/mvn.log" 2>&1; then
        tail -20 "$work/mvn.log" >&2
        unavailable "could not fetch Kafka $KAFKA_VERSION's artifacts with mvn"
    fi
    touch "$LIB/.complete"
    echo "$LIB"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
    local dir=$1 port=$2
    [[ -n $dir && -n $port ]] || die "usage: start DIR PORT"
    fetch >/dev/null
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    local cport=$((port + 1))
    if [[ ! -f $dir/server.properties ]]; then
        cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=3
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
        cat >"$dir/log4j2.properties" <<L4J
rootLogger.level=WARN
rootLogger.appenderRef.file.ref=file
appender.file.type=File
appender.file.name=file
appender.file.fileName=$dir/broker.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
L4J
    fi
    # C1 only starts the JVM about twice as fast (tests); KAFKA_FULL_JIT=1 for benchmarks.
    local jit=(-XX:TieredStopAtLevel=1)
    [[ ${KAFKA_FULL_JIT:-0} == 1 ]] && jit=()
    local java=(java -Xmx512m -Xms128m -XX:+UseSerialGC "${jit[@]}" -Dlog4j2.configurationFile="$dir/log4j2.properties"
        -cp "$LIB/*")
    if [[ ! -f $dir/data/meta.properties ]]; then
        # A cluster id is a base64url UUID (22 characters); made here rather than by a JVM run.
        local id
        id=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
        "${java[@]}" kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" \
            >"$dir/format.log" 2>&1 || { cat "$dir/format.log" >&2; die "storage format failed"; }
    fi
    nohup "${java[@]}" kafka.Kafka "$dir/server.properties" >>"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/broker.pid"
    local i
    for i in $(seq 1 600); do
        if port_open "$port"; then echo "broker on 127.0.0.1:$port (pid $(cat "$dir/broker.pid"))"; return 0; fi
        kill -0 "$(cat "$dir/broker.pid")" 2>/dev/null || { tail -30 "$dir/stdout.log" "$dir/broker.log" >&2 || true; die "broker exited"; }
        sleep 0.1
    done
    die "broker did not open 127.0.0.1:$port within 60 s"
}

stop() {
    local dir=$1
    [[ -f $dir/broker.pid ]] || return 0
    local pid
    pid=$(cat "$dir/broker.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        local i
        for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$dir/broker.pid"
}

case ${1:-} in
    fetch) fetch ;;
    start) start "${2:-}" "${3:-}" ;;
    stop) stop "${2:-}" ;;
    status) port_open "${2:-9092}" ;;
    *) die "usage: $0 fetch | start DIR PORT | stop DIR | status PORT" ;;
esac
