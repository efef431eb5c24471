package dev.infertop.ffi;

/**
 * Whether uprobes attach as uprobe-multi links (one link per program and file, Linux 6.6+) or one perf event
 * each. Decided once, before the object loads: a program loaded for uprobe-multi links cannot be attached
 * through a perf event, nor the other way round. The probe is libbpf's own (1.3+, probe_uprobe_multi_link): an
 * empty program loads with that attach type; a link on "/" is refused as no regular file (EBADF), so the kernel
 * knows the link type; and with pid -1 refused as invalid (EINVAL), so it filters by process, not by thread
 * (the first kernels with these links filtered by thread: the target's other threads would go unseen).
 * {@code INFERTOP_UPROBE_MULTI=0} keeps the perf events (to compare, or to work around a kernel).
 */
public final class UprobeMultiSupport {
    private UprobeMultiSupport() {}

    /** What is in use, and why, for INFERTOP_DEBUG and {@code infertop machine}. */
    public record Verdict(boolean multi, String line) {}

    private static Verdict verdict;

    public static synchronized Verdict verdict() {
        if (verdict == null) {
            verdict = probe();
        }
        return verdict;
    }

    public static boolean available() {
        return verdict().multi();
    }

    private static Verdict probe() {
        if ("0".equals(System.getenv("INFERTOP_UPROBE_MULTI"))) {
            return perf("INFERTOP_UPROBE_MULTI=0");
        }
        int program = BpfSyscall.loadEmptyKprobeProgram(BpfSyscall.BPF_TRACE_UPROBE_MULTI);
        if (program < 0) {
            return perf(-program == Errno.EPERM || -program == Errno.EACCES
                    ? "no privilege to load the program that probes for uprobe-multi links"
                    : "this kernel loads no program for uprobe-multi links: " + LibBpf.strerror(-program));
        }
        try {
            int link = BpfSyscall.createUprobeMultiLink(program, "/", new long[] {0}, false, 0);
            if (link >= 0 || link != -Errno.EBADF) {
                closeLink(link);
                return perf("this kernel has no uprobe-multi links"
                        + (link < 0 ? " (" + LibBpf.strerror(-link) + ")" : ""));
            }
            link = BpfSyscall.createUprobeMultiLink(program, "/", new long[] {0}, false, -1);
            if (link >= 0 || link != -Errno.EINVAL) {
                closeLink(link);
                return perf("this kernel's uprobe-multi links filter by thread, not by process");
            }
            return new Verdict(true, "uprobes: uprobe-multi links (one link per program and file)");
        } finally {
            LibC.closeQuietly(program);
        }
    }

    private static void closeLink(int fd) {
        if (fd >= 0) {
            LibC.closeQuietly(fd);
        }
    }

    private static Verdict perf(String why) {
        return new Verdict(false, "uprobes: one perf event each (" + why + ")");
    }
}
