"""Translations of the agent-facing texts in :mod:`agent_cards.texts`, by ``LICH_PROMPT_LANG`` tag.

Each table has exactly the English keys and the same ``{slots}`` (a test holds every language to it).

Literals the agent must type or recognise stay in English, byte for byte, inside every translation:
``[lich]``, ``send_to_session``, ``lich send``, ``SendMessage``, ``wait_for_answer``, the words ``task notification``,
``lich`` and ``Agent``, and for the command hook ``TaskStop``, ``agentId`` and the whole commands
``"$LICH_BIN" close {name}`` and ``"$LICH_BIN" control {name} abort`` (quotes included, so the model can run them).
Labels keep the English double quotes (``"{label}"``) so they appear verbatim; branches,
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
    "hook.launched.shared": (
        "Esta chamada de Agent não foi recusada: o lich a assumiu, então nenhum subagente roda aqui e ela não deve ser "
        "iniciada de novo. O agentId do worker é {name}. O TaskStop não o alcança: para pará-lo, execute "
        '"$LICH_BIN" close {name}.'
    ),
    "hook.launched.isolated": (
        "Esta chamada de Agent não foi recusada: o lich a assumiu, então nenhum subagente roda aqui e ela não deve ser "
        "iniciada de novo. O agentId do worker é {name}. O TaskStop não o alcança: para parar o turno dele, execute "
        '"$LICH_BIN" control {name} abort (o card e o worktree dele continuam à disposição do usuário).'
    ),
    "hook.completed": (
        "Esta chamada de Agent não foi recusada: o lich a assumiu, e o worker dela (agentId {name}) já respondeu. "
        "O relatório dele:"
    ),
    "hook.stopped.shared": (
        'O TaskStop foi executado, não recusado: o lich fechou a sessão "{label}" (agentId {name}), então esse worker '
        "parou."
    ),
    "hook.stopped.isolated": (
        'O TaskStop foi executado, não recusado: o lich parou o turno da sessão "{label}" (agentId {name}). O card e o '
        "worktree dela continuam à disposição do usuário."
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "Esta chamada de Agent não foi executada: a ponte do agent cards parou enquanto {program} rodava "
        "para ela, então o lich pode já ter a tarefa. Procure o worker no lich antes de pedir de novo; "
        "executá-la aqui também poderia fazer o trabalho duas vezes."
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'A sessão lich "{label}" (agentId {name}) continua rodando: a task notification que diz que ela falhou '
        "é o registro do próprio Claude Code, perdido com o processo anterior. Não refaça o trabalho dela; o "
        "relatório chega como uma nota [lich], e o TaskStop ainda a para."
    ),
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
    "hook.launched.shared": (
        "这次 Agent 调用并未被拒绝：lich 接手了它，因此这里不会运行任何子代理，也不得再次启动它。"
        '该 worker 的 agentId 是 {name}。TaskStop 无法触及它：要停止它，请运行 "$LICH_BIN" close {name}。'
    ),
    "hook.launched.isolated": (
        "这次 Agent 调用并未被拒绝：lich 接手了它，因此这里不会运行任何子代理，也不得再次启动它。"
        "该 worker 的 agentId 是 {name}。TaskStop 无法触及它：要停止它的当前轮次，"
        '请运行 "$LICH_BIN" control {name} abort（它的卡片和 worktree 会保留给用户）。'
    ),
    "hook.completed": (
        "这次 Agent 调用并未被拒绝：lich 接手了它，而它的 worker（agentId {name}）已经作答。其报告如下："
    ),
    "hook.stopped.shared": (
        'TaskStop 已执行，并未被拒绝：lich 关闭了会话 "{label}"（agentId {name}），因此该 worker 已停止。'
    ),
    "hook.stopped.isolated": (
        'TaskStop 已执行，并未被拒绝：lich 停止了会话 "{label}"（agentId {name}）的当前轮次。'
        "它的卡片和 worktree 会保留给用户。"
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "这次 Agent 调用没有运行：{program} 正在为它运行时，agent cards 的桥接进程停止了，所以 lich "
        "可能已经接下了这个任务。再次请求之前，先在 lich 中查找该 "
        "worker；在这里也运行它可能会把同一项工作做两遍。"
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'lich 会话 "{label}"（agentId {name}）仍在运行：说它失败的 task notification 只是 Claude Code 自己的记录，'
        "随上一个进程一起丢失了。不要重做它的工作；它的报告会以 [lich] 备注送达，TaskStop 仍可停止它。"
    ),
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
    "hook.launched.shared": (
        "Esta llamada a Agent no fue rechazada: lich la tomó, así que aquí no se ejecuta ningún subagente y no debe "
        "volver a iniciarse. El agentId del worker es {name}. TaskStop no puede alcanzarlo: para detenerlo, ejecuta "
        '"$LICH_BIN" close {name}.'
    ),
    "hook.launched.isolated": (
        "Esta llamada a Agent no fue rechazada: lich la tomó, así que aquí no se ejecuta ningún subagente y no debe "
        "volver a iniciarse. El agentId del worker es {name}. TaskStop no puede alcanzarlo: para detener su turno, "
        'ejecuta "$LICH_BIN" control {name} abort (su tarjeta y su worktree se conservan para el usuario).'
    ),
    "hook.completed": (
        "Esta llamada a Agent no fue rechazada: lich la tomó, y su worker (agentId {name}) ya respondió. Su informe:"
    ),
    "hook.stopped.shared": (
        'TaskStop se ejecutó, no fue rechazado: lich cerró la sesión "{label}" (agentId {name}), así que ese worker se '
        "ha detenido."
    ),
    "hook.stopped.isolated": (
        'TaskStop se ejecutó, no fue rechazado: lich detuvo el turno de la sesión "{label}" (agentId {name}). Su '
        "tarjeta y su worktree se conservan para el usuario."
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "Esta llamada a Agent no se ejecutó: el puente de agent cards se detuvo mientras {program} se "
        "ejecutaba para ella, así que puede que lich ya tenga la tarea. Busca el worker en lich antes de "
        "pedirla de nuevo; ejecutarla también aquí podría hacer el trabajo dos veces."
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'La sesión de lich "{label}" (agentId {name}) sigue en marcha: la task notification que dice que falló '
        "es el registro propio de Claude Code, perdido con el proceso anterior. No rehagas su trabajo; su "
        "informe llega como una nota [lich], y TaskStop aún la detiene."
    ),
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
    "hook.launched.shared": (
        "この Agent 呼び出しは拒否されたわけではありません。lich が引き受けたので、ここではサブエージェントは"
        "実行されず、改めて開始してはいけません。ワーカーの agentId は {name} です。"
        'TaskStop はこのワーカーに届きません。停止するには "$LICH_BIN" close {name} を実行してください。'
    ),
    "hook.launched.isolated": (
        "この Agent 呼び出しは拒否されたわけではありません。lich が引き受けたので、ここではサブエージェントは"
        "実行されず、改めて開始してはいけません。ワーカーの agentId は {name} です。TaskStop はこのワーカーに"
        '届きません。そのターンを停止するには "$LICH_BIN" control {name} abort を実行してください'
        "（カードと worktree はユーザーのために残ります）。"
    ),
    "hook.completed": (
        "この Agent 呼び出しは拒否されたわけではありません。lich が引き受け、そのワーカー（agentId {name}）は"
        "すでに回答しています。そのレポート:"
    ),
    "hook.stopped.shared": (
        'TaskStop は拒否されたのではなく、実行されました。lich がセッション "{label}"（agentId {name}）を閉じたので、'
        "そのワーカーは停止しています。"
    ),
    "hook.stopped.isolated": (
        'TaskStop は拒否されたのではなく、実行されました。lich がセッション "{label}"（agentId {name}）のターンを'
        "停止しました。そのカードと worktree はユーザーのために残ります。"
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "この Agent 呼び出しは実行されませんでした: {program} がこの呼び出しのために動いている間に agent "
        "cards のブリッジが停止したため、lich がすでにタスクを受け取っている可能性があります。もう一度依頼す"
        "る前に lich で worker を探してください。ここでも実行すると、同じ作業が二重に行われるおそれがあります"
        "。"
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'lich セッション "{label}"（agentId {name}）はまだ動いています: 失敗したと告げる task notification は '
        "Claude Code 自身の記録で、前のプロセスとともに失われたものです。その作業をやり直さないでください。"
        "報告は [lich] ノートとして届き、TaskStop でまだ止められます。"
    ),
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
    "hook.launched.shared": (
        "이 Agent 호출은 거부된 것이 아닙니다. lich가 맡았으므로 여기서는 서브에이전트가 실행되지 않으며, "
        "다시 시작해서는 안 됩니다. 워커의 agentId는 {name}입니다. TaskStop은 이 워커에 닿지 않습니다. 중지하려면 "
        '"$LICH_BIN" close {name} 명령을 실행하세요.'
    ),
    "hook.launched.isolated": (
        "이 Agent 호출은 거부된 것이 아닙니다. lich가 맡았으므로 여기서는 서브에이전트가 실행되지 않으며, "
        "다시 시작해서는 안 됩니다. 워커의 agentId는 {name}입니다. TaskStop은 이 워커에 닿지 않습니다. "
        '그 턴을 중지하려면 "$LICH_BIN" control {name} abort 명령을 실행하세요'
        "(카드와 worktree는 사용자를 위해 그대로 남습니다)."
    ),
    "hook.completed": (
        "이 Agent 호출은 거부된 것이 아닙니다. lich가 맡았고, 그 워커(agentId {name})가 이미 답했습니다. "
        "보고서는 다음과 같습니다:"
    ),
    "hook.stopped.shared": (
        'TaskStop은 거부되지 않고 실행되었습니다. lich가 "{label}" 세션(agentId {name})을 닫았으므로 그 워커는 '
        "중지되었습니다."
    ),
    "hook.stopped.isolated": (
        'TaskStop은 거부되지 않고 실행되었습니다. lich가 "{label}" 세션(agentId {name})의 턴을 중지했습니다. '
        "그 카드와 worktree는 사용자를 위해 그대로 남습니다."
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "이 Agent 호출은 실행되지 않았습니다: {program}이(가) 이 호출을 위해 실행되는 동안 agent cards "
        "브리지가 멈췄으므로 lich가 이미 작업을 받았을 수 있습니다. 다시 요청하기 전에 lich에서 worker를 "
        "찾아보세요. 여기서도 실행하면 같은 작업을 두 번 하게 될 수 있습니다."
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'lich 세션 "{label}"(agentId {name})은 아직 실행 중입니다: 실패했다는 task notification 은 Claude Code '
        "자체 기록이며 이전 프로세스와 함께 사라졌습니다. 그 작업을 다시 하지 마세요. 보고는 [lich] 노트로 "
        "도착하고, TaskStop 으로 여전히 멈출 수 있습니다."
    ),
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
    "hook.launched.shared": (
        "Этот вызов Agent не был отклонён: его взял lich, поэтому никакой субагент здесь не запускается, и запускать "
        "его заново нельзя. agentId исполнителя — {name}. TaskStop до него не доходит: чтобы его остановить, выполните "
        '"$LICH_BIN" close {name}.'
    ),
    "hook.launched.isolated": (
        "Этот вызов Agent не был отклонён: его взял lich, поэтому никакой субагент здесь не запускается, и запускать "
        "его заново нельзя. agentId исполнителя — {name}. TaskStop до него не доходит: чтобы остановить его текущий "
        'ход, выполните "$LICH_BIN" control {name} abort (его карточка и worktree остаются для пользователя).'
    ),
    "hook.completed": (
        "Этот вызов Agent не был отклонён: его взял lich, и исполнитель (agentId {name}) уже ответил. Отчёт "
        "исполнителя:"
    ),
    "hook.stopped.shared": (
        'TaskStop выполнен, а не отклонён: lich закрыл сессию "{label}" (agentId {name}), так что этот исполнитель '
        "остановился."
    ),
    "hook.stopped.isolated": (
        'TaskStop выполнен, а не отклонён: lich остановил текущий ход сессии "{label}" (agentId {name}). Её карточка '
        "и worktree остаются для пользователя."
    ),
    # The bridge (agent_cards.bridge): its host stopped while a command ran for the call.
    "bridge.unsure": (
        "Этот вызов Agent не выполнен: мост agent cards остановился, пока для него работал {program}, "
        "поэтому задача, возможно, уже у lich. Прежде чем просить снова, найдите worker в lich: если "
        "запустить его и здесь, работа может быть сделана дважды."
    ),
    # A worker Claude Code reported failed after the session came back (its record died with the process).
    "resume.still_running": (
        'Сессия lich "{label}" (agentId {name}) всё ещё работает: task notification о том, что она не '
        "удалась, — собственная запись Claude Code, потерянная вместе с прежним процессом. Не переделывайте её "
        "работу; её отчёт придёт заметкой [lich], а TaskStop по-прежнему её остановит."
    ),
}

TRANSLATIONS: dict[str, dict[str, str]] = {
    "pt-BR": _PT_BR,
    "zh-CN": _ZH_CN,
    "es": _ES,
    "ja": _JA,
    "ko": _KO,
    "ru": _RU,
}
