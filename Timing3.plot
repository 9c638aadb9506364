set output 'Timing3.svg
set terminal svg
set multiplot
set grid
set title "Clients end date"
set xlabel "audio cycles"
set ylabel "usec"
plot "/tmp/crosspoint-profiler-13427-3620591422.log" using 1 title "Audio period" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 8 title "game/35" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 16 title "stream-mix/36" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 24 title "desk/37" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 32 title "tone/73" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 40 title "delay-rec-64-3/92" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 48 title "delay-play-64-3/101" with lines
unset multiplot
unset output
