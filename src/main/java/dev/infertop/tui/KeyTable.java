package dev.infertop.tui;

import dev.infertop.io.ConfigFiles;
import dev.infertop.model.ConfigFile;

import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Key → {@link Action}, read from config/keys.conf (shipped in the jar) and then the user's
 * ~/.config/infertop/keys.conf. The loop looks keys up here and the help screen is drawn from here, so help
 * always shows exactly what the keys do.
 */
public final class KeyTable {
    private static final Set<String> NAMED = Set.of("Space", "Enter", "Esc", "Tab", "Backspace", "Up", "Down",
            "Left", "Right", "PageUp", "PageDown", "Home", "End", "Delete", "Insert");

    private final Map<String, Action> byKey = new LinkedHashMap<>();

    public static KeyTable load() {
        KeyTable table = new KeyTable();
        ConfigFiles.readShippedThenUser("keys.conf", table::line);
        return table;
    }

    public static KeyTable parse(String text) {
        KeyTable table = new KeyTable();
        ConfigFile.readText(text, table::line);
        return table;
    }

    private void line(String text, String where) {
        String[] fields = text.split("\\s+");
        if (fields.length != 2) {
            throw new IllegalArgumentException(where + ": expected KEY ACTION, got: " + text);
        }
        String key = fields[0];
        if (!validKey(key)) {
            throw new IllegalArgumentException(where + ": unknown key '" + key
                    + "': a single character, F1..F12, or one of " + String.join(", ", NAMED));
        }
        if (fields[1].equals("none")) {
            byKey.remove(key);
            return;
        }
        Action action = Action.parse(fields[1]);
        if (action == null) {
            throw new IllegalArgumentException(where + ": unknown action '" + fields[1] + "'");
        }
        byKey.remove(key); // a rebinding moves to the end, so help lists keys in file order
        byKey.put(key, action);
    }

    private static boolean validKey(String key) {
        return key.codePointCount(0, key.length()) == 1 || NAMED.contains(key) || key.matches("F([1-9]|1[0-2])");
    }

    /** The action bound to this keystroke, or null. */
    public Action action(KeyStroke key) {
        String name = keyName(key);
        return name == null ? null : byKey.get(name);
    }

    public Action action(String keyName) {
        return byKey.get(keyName);
    }

    /** Keys bound to each action, in table order; actions without a key are absent. */
    public Map<Action, List<String>> keysByAction() {
        Map<Action, List<String>> result = new EnumMap<>(Action.class);
        byKey.forEach((key, action) -> result.computeIfAbsent(action, a -> new ArrayList<>()).add(key));
        return result;
    }

    /** The first key bound to {@code action}, or null. */
    public String firstKey(Action action) {
        for (Map.Entry<String, Action> entry : byKey.entrySet()) {
            if (entry.getValue() == action) {
                return entry.getKey();
            }
        }
        return null;
    }

    /** The name a keystroke has in keys.conf; null for keys the table cannot name. */
    public static String keyName(KeyStroke key) {
        if (key == null) {
            return null;
        }
        KeyType type = key.getKeyType();
        if (type == KeyType.Character) {
            if (key.isCtrlDown() || key.isAltDown()) {
                return null;
            }
            char c = key.getCharacter();
            return c == ' ' ? "Space" : String.valueOf(c);
        }
        return switch (type) {
            case Enter -> "Enter";
            case Escape -> "Esc";
            case Tab -> "Tab";
            case Backspace -> "Backspace";
            case ArrowUp -> "Up";
            case ArrowDown -> "Down";
            case ArrowLeft -> "Left";
            case ArrowRight -> "Right";
            case PageUp -> "PageUp";
            case PageDown -> "PageDown";
            case Home -> "Home";
            case End -> "End";
            case Delete -> "Delete";
            case Insert -> "Insert";
            case F1 -> "F1";
            case F2 -> "F2";
            case F3 -> "F3";
            case F4 -> "F4";
            case F5 -> "F5";
            case F6 -> "F6";
            case F7 -> "F7";
            case F8 -> "F8";
            case F9 -> "F9";
            case F10 -> "F10";
            case F11 -> "F11";
            case F12 -> "F12";
            default -> null;
        };
    }
}
