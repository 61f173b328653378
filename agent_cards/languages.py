"""Translations of the agent-facing texts in :mod:`agent_cards.texts`, by ``LICH_PROMPT_LANG`` tag.

Each table has exactly the English keys and the same ``{slots}`` (a test holds every language to it).

Literals the agent must type or recognise stay in English, byte for byte, inside every translation:
``[lich]``, ``send_to_session``, ``lich send``, ``SendMessage``, ``wait_for_answer``, the words ``task notification``,
``lich`` and ``Agent``. Labels keep the English double quotes (``"{label}"``) so they appear verbatim; branches,
paths, statuses and reasons are slots and are never translated.
"""

from __future__ import annotations

# Brazilian Portuguese
_PT_BR: dict[str, str] = {
    "context.shared": (
        'A sessão lich "{label}" assumiu esta tarefa em um card próprio e trabalha neste mesmo checkout ({path}), '
        "editando os mesmos arquivos que você. O relatório completo chega sozinho como uma nota [lich], e não como "
        "task notification, então não há nada a coletar (wait_for_answer continua funcionando). SendMessage não "
        "alcança essa sessão; send_to_session ou lich send alcançam."
    ),
    "context.isolated": (
        'A sessão lich "{label}" assumiu esta tarefa em um card próprio, na branch {branch}, em um worktree próprio '
        "({path}), e não neste checkout. O relatório completo chega sozinho como uma nota [lich], e não como "
        "task notification, então não há nada a coletar (wait_for_answer continua funcionando). SendMessage não "
        "alcança essa sessão; send_to_session ou lich send alcançam."
    ),
    "completed.shared": (
        "{answer}\n\n"
        'A sessão lich "{label}" fez este trabalho neste mesmo checkout ({path}). Para falar com essa sessão, use '
        "send_to_session ou lich send, não SendMessage."
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'A sessão lich "{label}" fez este trabalho na branch {branch}, em um worktree próprio ({path}), e não neste '
        "checkout. Para falar com essa sessão, use send_to_session ou lich send, não SendMessage."
    ),
    "deny.never_reached": (
        'O lich abriu o card "{label}", mas a tarefa nunca chegou até ele (status: {status}). Ninguém está trabalhando '
        "nela: peça ao usuário que abra esse card e veja o que a está travando."
    ),
    "deny.unknown": (
        'O lich abriu o card "{label}" e respondeu ao repasse da tarefa com um status que este mod não conhece '
        "({status}). Não comece este trabalho de novo aqui: peça ao usuário que abra esse card."
    ),
    "deny.unknown.isolated": (
        'O lich abriu o card "{label}" na branch {branch} e respondeu ao repasse da tarefa com um status que este mod '
        "não conhece ({status}). Não comece este trabalho de novo aqui: peça ao usuário que abra esse card."
    ),
    "deny.esc": (
        "Esta chamada de Agent foi interrompida enquanto o lich abria um card para ela. Talvez uma sessão lich já "
        "esteja com a tarefa; se estiver, o relatório dela ainda chega como uma nota [lich]."
    ),
    "deny.esc.isolated": (
        "Esta chamada de Agent foi interrompida enquanto o lich abria um card para ela na branch {branch}. Talvez uma "
        "sessão lich já esteja com a tarefa; se estiver, o relatório dela ainda chega como uma nota [lich]."
    ),
    "deny.spawn": 'Em vez disso, o lich executa este agente como o card "{label}".',
    "deny.stop_refused": 'O lich não conseguiu parar a sessão "{label}": {reason}.',
}

# Simplified Chinese
_ZH_CN: dict[str, str] = {
    "context.shared": (
        'lich 会话 "{label}" 已在它自己的卡片中接手此任务，并且就在当前这个工作副本（{path}）中工作，'
        "编辑的正是你在改的那些文件。它的完整报告会以 [lich] 消息的形式自动送回，而不是作为 task notification，"
        "所以无需去收取（wait_for_answer 仍然可用）。SendMessage 联系不到该会话；send_to_session 或 lich send 可以。"
    ),
    "context.isolated": (
        'lich 会话 "{label}" 已在它自己的卡片中接手此任务，在分支 {branch} 上、它自己的 worktree（{path}）中工作，'
        "而不是在当前工作副本中。它的完整报告会以 [lich] 消息的形式自动送回，而不是作为 task notification，"
        "所以无需去收取（wait_for_answer 仍然可用）。SendMessage 联系不到该会话；send_to_session 或 lich send 可以。"
    ),
    "completed.shared": (
        "{answer}\n\n"
        'lich 会话 "{label}" 是在当前这个工作副本（{path}）中完成这项工作的。要联系该会话，请使用 send_to_session 或 '
        "lich send，而不是 SendMessage。"
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'lich 会话 "{label}" 是在分支 {branch} 上、它自己的 worktree（{path}）中完成这项工作的，'
        "而不是在当前工作副本中。要联系该会话，请使用 send_to_session 或 lich send，而不是 SendMessage。"
    ),
    "deny.never_reached": (
        'lich 打开了卡片 "{label}"，但任务始终没有送达那里（状态：{status}）。目前没有谁在处理这项任务：'
        "请让用户打开该卡片，看看是什么卡住了它。"
    ),
    "deny.unknown": (
        'lich 打开了卡片 "{label}"，并以一个本 mod 不认识的状态（{status}）回应了这次交接。不要在这里重新开始这项工作：'
        "请让用户打开该卡片。"
    ),
    "deny.unknown.isolated": (
        'lich 在分支 {branch} 上打开了卡片 "{label}"，并以一个本 mod 不认识的状态（{status}）回应了这次交接。'
        "不要在这里重新开始这项工作：请让用户打开该卡片。"
    ),
    "deny.esc": (
        "这次 Agent 调用在 lich 为它打开卡片的过程中被中断了。可能已有 lich 会话接手了该任务；如果是这样，"
        "它的报告仍会以 [lich] 消息的形式送回。"
    ),
    "deny.esc.isolated": (
        "这次 Agent 调用在 lich 为它在分支 {branch} 上打开卡片的过程中被中断了。可能已有 lich 会话接手了该任务；"
        "如果是这样，它的报告仍会以 [lich] 消息的形式送回。"
    ),
    "deny.spawn": 'lich 改为以卡片 "{label}" 的形式运行此 agent。',
    "deny.stop_refused": 'lich 无法停止会话 "{label}"：{reason}。',
}

# Spanish
_ES: dict[str, str] = {
    "context.shared": (
        'La sesión lich "{label}" tomó esta tarea en una tarjeta propia y trabaja en este mismo checkout ({path}), '
        "editando los mismos archivos que tú. Su informe completo llega por sí solo como una nota [lich], no como "
        "task notification, así que no hay nada que recoger (wait_for_answer sigue funcionando). SendMessage no puede "
        "comunicarse con esa sesión; send_to_session o lich send, sí."
    ),
    "context.isolated": (
        'La sesión lich "{label}" tomó esta tarea en una tarjeta propia, en la rama {branch} y en su propio worktree '
        "({path}), no en este checkout. Su informe completo llega por sí solo como una nota [lich], no como "
        "task notification, así que no hay nada que recoger (wait_for_answer sigue funcionando). SendMessage no puede "
        "comunicarse con esa sesión; send_to_session o lich send, sí."
    ),
    "completed.shared": (
        "{answer}\n\n"
        'La sesión lich "{label}" hizo este trabajo en este mismo checkout ({path}). Para comunicarte con esa sesión, '
        "usa send_to_session o lich send, no SendMessage."
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'La sesión lich "{label}" hizo este trabajo en la rama {branch}, en su propio worktree ({path}), no en este '
        "checkout. Para comunicarte con esa sesión, usa send_to_session o lich send, no SendMessage."
    ),
    "deny.never_reached": (
        'lich abrió la tarjeta "{label}", pero la tarea nunca llegó a ella (estado: {status}). Nadie está trabajando '
        "en ella: pídele al usuario que abra esa tarjeta y vea qué la está bloqueando."
    ),
    "deny.unknown": (
        'lich abrió la tarjeta "{label}" y respondió al traspaso de la tarea con un estado que este mod no conoce '
        "({status}). No vuelvas a empezar este trabajo aquí: pídele al usuario que abra esa tarjeta."
    ),
    "deny.unknown.isolated": (
        'lich abrió la tarjeta "{label}" en la rama {branch} y respondió al traspaso de la tarea con un estado que '
        "este mod no conoce ({status}). No vuelvas a empezar este trabajo aquí: pídele al usuario que abra esa tarjeta."
    ),
    "deny.esc": (
        "Esta llamada a Agent se interrumpió mientras lich le abría una tarjeta. Puede que una sesión lich ya tenga la "
        "tarea; si es así, su informe igualmente llegará como una nota [lich]."
    ),
    "deny.esc.isolated": (
        "Esta llamada a Agent se interrumpió mientras lich le abría una tarjeta en la rama {branch}. Puede que una "
        "sesión lich ya tenga la tarea; si es así, su informe igualmente llegará como una nota [lich]."
    ),
    "deny.spawn": 'En su lugar, lich ejecuta este agente como la tarjeta "{label}".',
    "deny.stop_refused": 'lich no pudo detener la sesión "{label}": {reason}.',
}

# Japanese
_JA: dict[str, str] = {
    "context.shared": (
        'lich セッション "{label}" がこのタスクを専用のカードで引き受け、あなたと同じチェックアウト（{path}）で、'
        "あなたと同じファイルを編集しながら作業しています。レポート全文は task notification としてではなく、[lich] "
        "メモとして自動で届くので、取りに行く必要はありません（wait_for_answer も引き続き使えます）。SendMessage "
        "ではこのセッションに届きませんが、send_to_session または lich send なら届きます。"
    ),
    "context.isolated": (
        'lich セッション "{label}" がこのタスクを専用のカードで引き受け、このチェックアウトではなく、ブランチ {branch} '
        "上の専用の worktree（{path}）で作業しています。レポート全文は task notification としてではなく、[lich] "
        "メモとして自動で届くので、取りに行く必要はありません（wait_for_answer も引き続き使えます）。SendMessage "
        "ではこのセッションに届きませんが、send_to_session または lich send なら届きます。"
    ),
    "completed.shared": (
        "{answer}\n\n"
        'lich セッション "{label}" は、あなたと同じチェックアウト（{path}）でこの作業を行いました。'
        "このセッションに連絡するには、SendMessage ではなく send_to_session または lich send を使ってください。"
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'lich セッション "{label}" は、このチェックアウトではなく、ブランチ {branch} 上の専用の worktree（{path}）'
        "でこの作業を行いました。このセッションに連絡するには、SendMessage ではなく send_to_session または lich "
        "send を使ってください。"
    ),
    "deny.never_reached": (
        'lich はカード "{label}" を開きましたが、タスクは一度もそこに届いていません（ステータス: {status}）。'
        "このタスクに取り組んでいるものはありません。ユーザーにそのカードを開いてもらい、"
        "何が妨げているのかを確認してもらってください。"
    ),
    "deny.unknown": (
        'lich はカード "{label}" を開き、この mod が知らないステータス（{status}）で引き継ぎに応答しました。'
        "ここでこの作業を改めて始めないでください。ユーザーにそのカードを開いてもらってください。"
    ),
    "deny.unknown.isolated": (
        'lich はブランチ {branch} でカード "{label}" を開き、この mod が知らないステータス（{status}）'
        "で引き継ぎに応答しました。ここでこの作業を改めて始めないでください。"
        "ユーザーにそのカードを開いてもらってください。"
    ),
    "deny.esc": (
        "lich がこの Agent 呼び出しのためにカードを開いている途中で、呼び出しが中断されました。すでに lich "
        "セッションがタスクを引き受けている可能性があり、その場合でもレポートは [lich] メモとして届きます。"
    ),
    "deny.esc.isolated": (
        "lich がこの Agent 呼び出しのためにブランチ {branch} でカードを開いている途中で、呼び出しが中断されました。"
        "すでに lich セッションがタスクを引き受けている可能性があり、その場合でもレポートは [lich] メモとして届きます。"
    ),
    "deny.spawn": 'lich は代わりに、このエージェントをカード "{label}" として実行します。',
    "deny.stop_refused": 'lich はセッション "{label}" を停止できませんでした: {reason}。',
}

# Korean
_KO: dict[str, str] = {
    "context.shared": (
        '"{label}" lich 세션이 이 작업을 별도 카드로 맡아, 바로 이 체크아웃({path})에서 지금 편집 중인 것과 같은 '
        "파일들을 편집하며 작업하고 있습니다. 전체 보고서는 task notification이 아니라 [lich] 메모로 자동으로 "
        "돌아오므로 따로 가져올 것은 없습니다(wait_for_answer도 계속 사용할 수 있습니다). SendMessage로는 이 세션에 "
        "연락할 수 없고, send_to_session이나 lich send로는 할 수 있습니다."
    ),
    "context.isolated": (
        '"{label}" lich 세션이 이 작업을 별도 카드로 맡아, 이 체크아웃이 아닌 브랜치 {branch}의 자체 '
        "worktree({path})에서 작업하고 있습니다. 전체 보고서는 task notification이 아니라 [lich] 메모로 자동으로 "
        "돌아오므로 따로 가져올 것은 없습니다(wait_for_answer도 계속 사용할 수 있습니다). SendMessage로는 이 세션에 "
        "연락할 수 없고, send_to_session이나 lich send로는 할 수 있습니다."
    ),
    "completed.shared": (
        "{answer}\n\n"
        '"{label}" lich 세션이 바로 이 체크아웃({path})에서 이 작업을 수행했습니다. 이 세션에 연락하려면 SendMessage가 '
        "아니라 send_to_session이나 lich send를 사용하세요."
    ),
    "completed.isolated": (
        "{answer}\n\n"
        '"{label}" lich 세션이 이 체크아웃이 아닌 브랜치 {branch}의 자체 worktree({path})에서 이 작업을 수행했습니다. '
        "이 세션에 연락하려면 SendMessage가 아니라 send_to_session이나 lich send를 사용하세요."
    ),
    "deny.never_reached": (
        'lich가 "{label}" 카드를 열었지만 작업이 끝내 그 카드에 전달되지 않았습니다(상태: {status}). 지금 이 작업을 '
        "맡아 처리하는 곳은 없습니다. 사용자에게 그 카드를 열어 무엇이 막고 있는지 확인해 달라고 요청하세요."
    ),
    "deny.unknown": (
        'lich가 "{label}" 카드를 열고, 이 mod가 알지 못하는 상태({status})로 작업 인계에 응답했습니다. 이 작업을 '
        "여기서 다시 시작하지 마세요. 사용자에게 그 카드를 열어 달라고 요청하세요."
    ),
    "deny.unknown.isolated": (
        'lich가 브랜치 {branch}에서 "{label}" 카드를 열고, 이 mod가 알지 못하는 상태({status})로 작업 인계에 '
        "응답했습니다. 이 작업을 여기서 다시 시작하지 마세요. 사용자에게 그 카드를 열어 달라고 요청하세요."
    ),
    "deny.esc": (
        "lich가 이 Agent 호출을 위해 카드를 여는 도중에 호출이 중단되었습니다. 이미 lich 세션이 작업을 맡았을 수 "
        "있으며, 그렇다면 그 보고서는 여전히 [lich] 메모로 돌아옵니다."
    ),
    "deny.esc.isolated": (
        "lich가 이 Agent 호출을 위해 브랜치 {branch}에서 카드를 여는 도중에 호출이 중단되었습니다. 이미 lich 세션이 "
        "작업을 맡았을 수 있으며, 그렇다면 그 보고서는 여전히 [lich] 메모로 돌아옵니다."
    ),
    "deny.spawn": '대신 lich가 이 에이전트를 "{label}" 카드로 실행합니다.',
    "deny.stop_refused": 'lich가 "{label}" 세션을 중지하지 못했습니다: {reason}.',
}

# Russian
_RU: dict[str, str] = {
    "context.shared": (
        'Сессия lich "{label}" взяла эту задачу в отдельную карточку и работает в этой же рабочей копии ({path}), '
        "редактируя те же файлы, что и вы. Весь её отчёт придёт сам, в виде заметки [lich], а не как "
        "task notification, так что забирать ничего не нужно (wait_for_answer по-прежнему работает). SendMessage не "
        "может связаться с этой сессией; send_to_session или lich send — могут."
    ),
    "context.isolated": (
        'Сессия lich "{label}" взяла эту задачу в отдельную карточку и работает в ветке {branch} в собственном '
        "worktree ({path}), а не в этой рабочей копии. Весь её отчёт придёт сам, в виде заметки [lich], а не как "
        "task notification, так что забирать ничего не нужно (wait_for_answer по-прежнему работает). SendMessage не "
        "может связаться с этой сессией; send_to_session или lich send — могут."
    ),
    "completed.shared": (
        "{answer}\n\n"
        'Сессия lich "{label}" выполнила эту работу в этой же рабочей копии ({path}). Чтобы связаться с этой сессией, '
        "используйте send_to_session или lich send, а не SendMessage."
    ),
    "completed.isolated": (
        "{answer}\n\n"
        'Сессия lich "{label}" выполнила эту работу в ветке {branch} в собственном worktree ({path}), а не в этой '
        "рабочей копии. Чтобы связаться с этой сессией, используйте send_to_session или lich send, а не SendMessage."
    ),
    "deny.never_reached": (
        'lich открыл карточку "{label}", но задача до неё так и не дошла (статус: {status}). Над задачей никто не '
        "работает: попросите пользователя открыть эту карточку и посмотреть, что её держит."
    ),
    "deny.unknown": (
        'lich открыл карточку "{label}" и ответил на передачу задачи статусом, которого этот мод не знает ({status}). '
        "Не начинайте эту работу здесь заново: попросите пользователя открыть эту карточку."
    ),
    "deny.unknown.isolated": (
        'lich открыл карточку "{label}" в ветке {branch} и ответил на передачу задачи статусом, которого этот мод не '
        "знает ({status}). Не начинайте эту работу здесь заново: попросите пользователя открыть эту карточку."
    ),
    "deny.esc": (
        "Этот вызов Agent был прерван, пока lich открывал для него карточку. Возможно, задачу уже взяла сессия lich; "
        "если так, её отчёт всё равно придёт в виде заметки [lich]."
    ),
    "deny.esc.isolated": (
        "Этот вызов Agent был прерван, пока lich открывал для него карточку в ветке {branch}. Возможно, задачу уже "
        "взяла сессия lich; если так, её отчёт всё равно придёт в виде заметки [lich]."
    ),
    "deny.spawn": 'Вместо этого lich запускает этого агента как карточку "{label}".',
    "deny.stop_refused": 'lich не смог остановить сессию "{label}": {reason}.',
}

TRANSLATIONS: dict[str, dict[str, str]] = {
    "pt-BR": _PT_BR,
    "zh-CN": _ZH_CN,
    "es": _ES,
    "ja": _JA,
    "ko": _KO,
    "ru": _RU,
}
