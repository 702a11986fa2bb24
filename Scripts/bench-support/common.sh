# Shell functions shared by Scripts/bench and Scripts/bench-core (sourced,
# not run). Bash, awk, timeout only: they also run on a bare machine.

# Builds the heap-allocation counter (malloc_count.c) into DIR and prints
# its path; prints nothing without a C compiler. MALLOC_COUNT_SO (e.g. from
# Scripts/bench-bundle) wins over building.
bench_malloc_counter() { # root scratch-dir
  if [[ -n ${MALLOC_COUNT_SO:-} ]]; then echo "$MALLOC_COUNT_SO"; return; fi
  if ${CC:-cc} -O2 -shared -fPIC -o "$2/malloc_count.so" "$1/Scripts/bench-support/malloc_count.c" \
    -lpthread 2>/dev/null; then
    echo "$2/malloc_count.so"
  fi
}
# GET over bash's /dev/tcp (no curl on a bare machine); the server closes
# after an HTTP/1.0 answer.
http_get() { # port path
  timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 || exit 1
    printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n" "$1" "$0" >&3; cat <&3' "$1" "$2" 2>/dev/null || true
}
# Swiftlet's counters: "forwarded received bytes_sent", then the cumulative
# counts of swiftlet_worker_delay_seconds' buckets, each as "le:count"
# (the workers' recvmmsg-to-sendmmsg delay; none from older binaries).
metrics() { # port
  http_get "$1" /metrics | awk '
    $1=="swiftlet_forwarded_packets_total"{f=$2} $1=="swiftlet_rtp_packets_received_total"{r=$2}
    $1=="swiftlet_rtp_bytes_sent_total"{b=$2}
    $1 ~ /^swiftlet_worker_delay_seconds_bucket/ { le=$1; sub(/.*le="/, "", le); sub(/".*/, "", le); d=d " " le ":" $2 }
    END{print f+0, r+0, b+0 d}'
}
# The p99 of the worker delay between two `metrics` lines, in µs: the upper
# bound of the bucket that holds it ("-" without samples; ">50000" past the
# last bound).
delay_p99() { # metrics-before metrics-after
  awk -v m0="$1" -v m1="$2" 'BEGIN{ n0=split(m0, x); n1=split(m1, y); if (n1 < 4 || n0 != n1) { print "-"; exit }
    for (i=4; i<=n1; i++) { split(x[i], a, ":"); split(y[i], b, ":"); le[i]=b[1]; c[i]=b[2]-a[2] }
    total=c[n1]; if (total <= 0) { print "-"; exit }
    for (i=4; i<=n1; i++) if (c[i] >= total*0.99) { print (le[i]=="+Inf" ? ">50000" : sprintf("%.0f", le[i]*1000000)); exit } }'
}
# One line per thread: tid comm ns-on-CPU (schedstat's first field; the
# 10 ms ticks of /proc/PID/stat are too coarse at low load).
threads() { # pid
  local t comm run
  for t in /proc/"$1"/task/*; do
    { read -r comm <"$t/comm" && read -r run _ <"$t/schedstat"; } 2>/dev/null || continue
    # One field: thread names may hold spaces (Janus names its loops so).
    echo "${t##*/} ${comm// /_} $run"
  done
}
# ns on CPU over all threads, now. A thread that ends between the glob and
# the read makes cat fail: that is not an error here (with pipefail it
# ended the whole bench, 2026-12-07); neither is a process already gone.
cpu_ns() { # pid
  { cat /proc/"$1"/task/*/schedstat 2>/dev/null || true; } | awk '{s+=$1} END{printf "%.0f\n", s}'
}
# Resident set size in KiB (VmRSS), 0 once the process is gone.
rss_kib() { # pid
  awk '$1=="VmRSS:"{print $2; f=1} END{if(!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}
# The count malloc_count.c keeps in FILE (0 before its first write).
malloc_total() { # file
  cat "$1" 2>/dev/null || echo 0
}
now() { date +%s.%N; }
# A numeric field over roombot JSON files (pretty-printed, sorted keys: one
# "key" : value per line) at a dotted path such as groups.subscriber.lost,
# folded over every file and occurrence: `sum` prints the total (0 where
# none has it), `max` the largest with one decimal (p95s of several viewer
# processes: the worst one), "-" where none has it.
json_fold() { # sum|max path files...
  local fold=$1 path=$2; shift 2
  awk -v fold="$fold" -v want="$path" '
    FNR==1 { depth=0 }
    { line=$0; sub(/^[ \t]+/, "", line) }
    line ~ /^"[^"]*" : [\{\[]$/ { k=line; sub(/^"/, "", k); sub(/".*/, "", k); stack[++depth]=k; next }
    line ~ /^[\{\[]$/ { stack[++depth]="#"; next }
    line ~ /^[\}\]],?$/ { depth--; next }
    line ~ /^"[^"]*" : / {
      k=line; sub(/^"/, "", k); sub(/".*/, "", k); v=line; sub(/^"[^"]*" : /, "", v); sub(/,$/, "", v)
      # Objects in arrays ("#") are not named in the path.
      p=""; for (i=1; i<=depth; i++) if (stack[i]!="#") p=p stack[i] "."
      if (p k == want && v != "null") { s+=v; if (!n++ || v+0 > m) m=v+0 }
    }
    END {
      if (fold == "sum") printf "%.0f\n", s
      else if (n) printf "%.1f\n", m
      else print "-"
    }' "$@"
}
json_sum() { json_fold sum "$@"; } # path files...
json_max() { json_fold max "$@"; } # path files...
median() { # [decimals] < values
  tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | awk -v d="${1:-2}" '{v[NR]=$1} END{if(!NR){print "-"; exit}
    printf "%." d "f\n", NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
