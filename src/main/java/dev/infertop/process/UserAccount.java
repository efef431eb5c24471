package dev.infertop.process;

import dev.infertop.ffi.UserDatabase;

import java.util.List;
import java.util.Optional;

/**
 * A user to run a command as: uid, primary gid, the supplementary groups initgroups(3) would give, and the
 * home directory (for HOME).
 */
public record UserAccount(String name, int uid, int gid, List<Integer> groups, String home) {
    public UserAccount {
        groups = List.copyOf(groups);
    }

    /** A user given as a name or as a numeric uid, as sudo -u and setpriv take it; empty when unknown. */
    public static Optional<UserAccount> lookup(String nameOrUid) {
        Optional<UserDatabase.Entry> entry = isUid(nameOrUid)
                ? UserDatabase.byUid(Integer.parseUnsignedInt(nameOrUid))
                : UserDatabase.byName(nameOrUid);
        return entry.map(e -> of(e, e.gid()));
    }

    /** The user with this uid, with {@code gid} as the primary group (sudo's SUDO_GID, say). */
    public static Optional<UserAccount> byUid(int uid, int gid) {
        return UserDatabase.byUid(uid).map(e -> of(e, gid));
    }

    private static UserAccount of(UserDatabase.Entry entry, int gid) {
        return new UserAccount(entry.name(), entry.uid(), gid, UserDatabase.groups(entry.name(), gid), entry.home());
    }

    /** Decimal digits that fit a uid_t (below 2^32 - 1, which means "no uid"). */
    static boolean isUid(String text) {
        if (text.isEmpty() || text.length() > 10 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return false;
        }
        return Long.parseLong(text) < 0xFFFF_FFFFL;
    }

    /** "nobody (uid 65534)". */
    public String label() {
        return name + " (uid " + Integer.toUnsignedString(uid) + ")";
    }
}
