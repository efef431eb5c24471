package dev.infertop.session;

import dev.infertop.model.SafeText;
import dev.infertop.process.ProcessUids;
import dev.infertop.process.UserAccount;

import java.util.Map;
import java.util.Optional;

/**
 * The user infertop acts for. Through sudo (real uid 0 and SUDO_UID set) that is sudo's caller, SUDO_UID;
 * otherwise the real uid, so root is itself. SUDO_UID counts only when the real uid is 0: a user with
 * CAP_BPF cannot pose as someone else by setting it.
 *
 * @param uid        the invoking user's uid
 * @param viaSudo    whether it came from SUDO_UID
 */
record InvokingUser(int uid, boolean viaSudo) {

    static InvokingUser of(Map<String, String> environment, int realUid) {
        String sudoUid = environment.get("SUDO_UID");
        if (realUid != 0 || sudoUid == null) {
            return new InvokingUser(realUid, false);
        }
        return new InvokingUser(parseId("SUDO_UID", sudoUid), true);
    }

    /** A uid or gid from sudo's environment; a malformed one is an error, never silently root. */
    static int parseId(String variable, String value) {
        String text = value.strip();
        if (text.isEmpty() || text.length() > 10 || !text.chars().allMatch(c -> c >= '0' && c <= '9')
                || Long.parseLong(text) >= 0xFFFF_FFFFL) {
            throw new UserError(variable + "='" + value + "' is not a numeric id: unset it, or run infertop "
                    + "through sudo", 2);
        }
        return (int) Long.parseLong(text);
    }

    /** "alice (uid 1000)", or "uid 1000" for a uid with no user. */
    String label() {
        return label(uid);
    }

    static String label(int uid) {
        return UserAccount.lookup(Integer.toUnsignedString(uid)).map(UserAccount::label)
                .orElse("uid " + Integer.toUnsignedString(uid));
    }

    /**
     * One line when {@code pid} is not the invoking user's: infertop traces it all the same (root may), but
     * says whose it is. Empty for the user's own process or one already gone.
     */
    Optional<String> foreignProcessNote(int pid, String command, Optional<ProcessUids> uids) {
        if (uids.isEmpty() || uids.get().ownedBy(uid)) {
            return Optional.empty();
        }
        return Optional.of("infertop: pid " + pid + " (" + SafeText.of(command) + ") runs as "
                + label(uids.get().owner()) + ", not as you, " + label() + ": tracing it all the same");
    }
}
