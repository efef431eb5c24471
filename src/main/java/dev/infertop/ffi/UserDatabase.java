package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * libc's user and group database (passwd, group through NSS: files, LDAP, systemd-userdb alike), and the
 * process's real uid. The reentrant {@code _r} calls: infertop has several threads. Each call is bound at its
 * first use (holder classes, as in {@link LibBpf}): attaching to a pid needs only getuid.
 */
public final class UserDatabase {
    private UserDatabase() {}

    /** One passwd entry: what running a command as that user needs. */
    public record Entry(String name, int uid, int gid, String home) {}

    private static final Linker LINKER = Linker.nativeLinker();

    private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new NativeLibraryMissing("libc lacks " + name));
        return LINKER.downcallHandle(symbol, descriptor);
    }

    /** struct passwd (pwd.h) on LP64 Linux. */
    private static final StructLayout PASSWD = MemoryLayout.structLayout(
            ADDRESS.withName("pw_name"), ADDRESS.withName("pw_passwd"), JAVA_INT.withName("pw_uid"),
            JAVA_INT.withName("pw_gid"), ADDRESS.withName("pw_gecos"), ADDRESS.withName("pw_dir"),
            ADDRESS.withName("pw_shell"));
    private static final long PW_NAME = PASSWD.byteOffset(MemoryLayout.PathElement.groupElement("pw_name"));
    private static final long PW_UID = PASSWD.byteOffset(MemoryLayout.PathElement.groupElement("pw_uid"));
    private static final long PW_GID = PASSWD.byteOffset(MemoryLayout.PathElement.groupElement("pw_gid"));
    private static final long PW_DIR = PASSWD.byteOffset(MemoryLayout.PathElement.groupElement("pw_dir"));

    private static final int ERANGE = 34;
    /** Bigger string buffers are tried up to this size (an LDAP entry with a long gecos still fits). */
    private static final long MAX_BUFFER_BYTES = 1 << 20;
    /** Supplementary groups beyond this are an error, not a truncation (Linux's NGROUPS_MAX is 65536). */
    private static final int MAX_GROUPS = 65536;

    // getpwnam_r(3): int getpwnam_r(const char *name, struct passwd *pwd, char *buf, size_t buflen,
    //                               struct passwd **result)
    private static final class getpwnam_r {
        static final MethodHandle HANDLE = bind("getpwnam_r",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    }

    // getpwuid_r(3): int getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t buflen, struct passwd **result)
    private static final class getpwuid_r {
        static final MethodHandle HANDLE = bind("getpwuid_r",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    }

    // getgrouplist(3): int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
    private static final class getgrouplist {
        static final MethodHandle HANDLE = bind("getgrouplist",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    }

    // getuid(2): uid_t getuid(void)
    private static final class getuid {
        static final MethodHandle HANDLE = bind("getuid", FunctionDescriptor.of(JAVA_INT));
    }

    /** The real uid of this process (who started it; sudo makes it 0). */
    public static int realUid() {
        try {
            return (int) getuid.HANDLE.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static Optional<Entry> byName(String name) {
        if (name.isEmpty() || name.indexOf('\0') >= 0) {
            return Optional.empty();
        }
        return lookup((arena, pwd, buffer, size, result) ->
                (int) getpwnam_r.HANDLE.invokeExact(arena.allocateFrom(name), pwd, buffer, size, result));
    }

    public static Optional<Entry> byUid(int uid) {
        return lookup((arena, pwd, buffer, size, result) ->
                (int) getpwuid_r.HANDLE.invokeExact(uid, pwd, buffer, size, result));
    }

    @FunctionalInterface
    private interface PasswdCall {
        int call(Arena arena, MemorySegment pwd, MemorySegment buffer, long size, MemorySegment result) throws Throwable;
    }

    private static Optional<Entry> lookup(PasswdCall call) {
        for (long size = 4096; size <= MAX_BUFFER_BYTES; size *= 4) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment pwd = arena.allocate(PASSWD);
                MemorySegment buffer = arena.allocate(size);
                MemorySegment result = arena.allocate(ADDRESS);
                int rc = call.call(arena, pwd, buffer, size, result);
                if (rc == ERANGE) {
                    continue;
                }
                if (rc != 0 || result.get(ADDRESS, 0).equals(MemorySegment.NULL)) {
                    return Optional.empty(); // not found (rc 0, result NULL) or the database failed
                }
                // SAFETY: on success pw_name and pw_dir point into `buffer` (size bytes), NUL-terminated.
                String name = pwd.get(ADDRESS, PW_NAME).reinterpret(size).getString(0);
                String home = pwd.get(ADDRESS, PW_DIR).reinterpret(size).getString(0);
                return Optional.of(new Entry(name, pwd.get(JAVA_INT, PW_UID), pwd.get(JAVA_INT, PW_GID), home));
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
        return Optional.empty();
    }

    /** The groups {@code user} is a member of, {@code primaryGid} among them (what initgroups(3) would set). */
    public static List<Integer> groups(String user, int primaryGid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            int capacity = 64;
            while (true) {
                MemorySegment groups = arena.allocate(JAVA_INT, capacity);
                count.set(JAVA_INT, 0, capacity);
                int rc = (int) getgrouplist.HANDLE.invokeExact(arena.allocateFrom(user), primaryGid, groups, count);
                int found = count.get(JAVA_INT, 0);
                if (rc >= 0) {
                    List<Integer> list = new ArrayList<>(found);
                    for (int i = 0; i < found; i++) {
                        list.add(groups.getAtIndex(JAVA_INT, i));
                    }
                    return list;
                }
                if (found <= capacity || found > MAX_GROUPS) {
                    throw new IllegalStateException("getgrouplist failed for " + user);
                }
                capacity = found; // -1: too small, and count now says how many there are
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
