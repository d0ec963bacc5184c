// The memory a group of processes holds, counted so that no neighbour changes
// it: the number of distinct physical pages mapped by any process of the
// group (Linux /proc/PID/pagemap, Documentation/admin-guide/mm/pagemap.rst:
// one 64-bit entry per virtual page, bit 63 "page present", bits 0-54 the
// page frame number; root is needed to see frame numbers).
//
// PSS divides every shared page by the number of processes mapping it, the
// neighbours' included: the same programs read less PSS when something else
// on the host maps libc or libcrypto. The group's distinct pages count a
// shared library page once, wholly, whoever else maps it: the memory the
// group would hold if it ran alone. Pages swapped out are not counted.
//
// As a program: node tests/bench/footprint.mjs PID... prints the figure.

import { openSync, readSync, closeSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PAGE = 4096;
const PRESENT = 1n << 63n;
const PFN_MASK = (1n << 55n) - 1n;

// The distinct frames of one process, added to the set; false when its
// pagemap cannot be read (gone, or no frame numbers without root).
function addFrames(pid, frames) {
  let maps, fd;
  try {
    maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
    fd = openSync(`/proc/${pid}/pagemap`, 'r');
  } catch {
    return false;
  }
  let seen = false;
  try {
    for (const line of maps.split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (!m || m[3] === '[vsyscall]') continue;
      const lo = parseInt(m[1], 16) / PAGE;
      const n = (parseInt(m[2], 16) - parseInt(m[1], 16)) / PAGE;
      const buf = Buffer.alloc(Math.min(n, 4096) * 8);
      for (let done = 0; done < n; ) {
        const k = Math.min(n - done, 4096);
        let got;
        try {
          got = readSync(fd, buf, 0, k * 8, (lo + done) * 8);
        } catch {
          break;
        }
        for (let i = 0; i + 8 <= got; i += 8) {
          const e = buf.readBigUInt64LE(i);
          if (!(e & PRESENT)) continue;
          const pfn = e & PFN_MASK;
          if (pfn === 0n) continue; // frame numbers hidden (not root)
          frames.add(pfn);
          seen = true;
        }
        done += k;
      }
    }
  } finally {
    closeSync(fd);
  }
  return seen;
}

// KiB held by the group pids, each page once; 0 when nothing could be read.
export function footprintKb(pids) {
  const frames = new Set();
  for (const p of pids) addFrames(p, frames);
  return (frames.size * PAGE) / 1024;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pids = process.argv.slice(2).map(Number).filter((p) => p > 0);
  console.log(`${(footprintKb(pids) / 1024).toFixed(1)} MiB in distinct pages for ${pids.length} processes`);
}
