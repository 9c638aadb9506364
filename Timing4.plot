set output 'Timing4.svg
set terminal svg
set multiplot
set grid
set title "Clients scheduling latency"
set xlabel "audio cycles"
set ylabel "usec"
plot "/tmp/crosspoint-profiler-13427-3620591422.log" using 9 title "game/35" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 17 title "stream-mix/36" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 25 title "desk/37" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 33 title "tone/73" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 41 title "delay-rec-64-3/92" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 49 title "delay-play-64-3/101" with lines
unset multiplot
unset output
