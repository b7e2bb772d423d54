/** Preloaded (`node -r`) into a command a bench times: prints the process's peak RSS and CPU time (all its threads) on stderr as it exits. */
process.on('exit', () => {
  const cpu = process.cpuUsage();
  process.stderr.write(`\nmax-rss-kib ${process.resourceUsage().maxRSS}\ncpu-us ${cpu.user + cpu.system}\n`);
});
