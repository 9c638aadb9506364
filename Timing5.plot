set output 'Timing5.svg
set terminal svg
set multiplot
set grid
set title "Clients duration"
set xlabel "audio cycles"
set ylabel "usec"
plot "/tmp/crosspoint-profiler-13427-3620591422.log" using 10 title "game/35" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 18 title "stream-mix/36" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 26 title "desk/37" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 34 title "tone/73" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 42 title "delay-rec-64-3/92" with lines, "/tmp/crosspoint-profiler-13427-3620591422.log" using 50 title "delay-play-64-3/101" with lines
unset multiplot
unset output
