"""What the providers' own Python SDKs make and accept, for the tests of `invoke --batch` and
`export` (tests/cli/common/sdk_models.rs runs this in a venv with the pinned SDKs).

`inputs`: prints a JSON object of tool calls as each SDK serialises a model's answer (built
from the SDKs' typed models, dumped as their `model_dump` gives them).

`check`: reads `[{"kind": KIND, "value": …}, …]` on stdin and prints a JSON list of problems:
every value is validated against the SDK's typed model for KIND, and a key the model does not
declare is a problem even where the model would silently drop it.
"""

import json
import sys
import typing

from pydantic import TypeAdapter


def keys_of_typed_dict(td):
    return set(typing.get_type_hints(td))


def typed_dict(td, value, where, extra=()):
    if not isinstance(value, dict):
        return [f"{where}: {td.__name__} must be an object"]
    problems = [
        f"{where}: {td.__name__} has no key {key!r}"
        for key in value
        if key not in keys_of_typed_dict(td) | set(extra)
    ]
    try:
        TypeAdapter(td).validate_python(value)
    except Exception as error:  # pydantic's ValidationError, with every failure listed
        problems.append(f"{where}: {td.__name__}: {error}")
    return problems


def model(cls, value, where):
    """A pydantic model; keys it does not declare are problems even where it ignores them."""
    problems = []
    if isinstance(value, dict):
        known = set()
        for name, field in cls.model_fields.items():
            known |= {name, field.alias or name}
        generator = cls.model_config.get("alias_generator")
        if generator is not None:
            known |= {generator(name) for name in cls.model_fields}
        problems += [
            f"{where}: {cls.__name__} has no key {key!r}" for key in value if key not in known
        ]
    try:
        cls.model_validate(value)
    except Exception as error:
        problems.append(f"{where}: {cls.__name__}: {error}")
    return problems


def each(value, where, check):
    if not isinstance(value, list):
        return [f"{where}: must be a list"]
    problems = []
    for i, item in enumerate(value):
        problems += check(item, f"{where}/{i}")
    return problems


def check(kind, value, where):
    if kind == "openai-messages":
        from openai.types.chat import ChatCompletionToolMessageParam

        # toolctl writes `name` on a tool message, as OpenAI's own cookbook does; the Chat
        # Completions API takes it.
        return each(
            value,
            where,
            lambda m, w: typed_dict(ChatCompletionToolMessageParam, m, w, extra=("name",)),
        )
    if kind == "ollama-messages":
        import ollama

        return each(value, where, lambda m, w: model(ollama.Message, m, w))
    if kind == "openai-responses-items":
        from openai.types.responses.response_input_param import FunctionCallOutput

        return each(value, where, lambda m, w: typed_dict(FunctionCallOutput, m, w))
    if kind == "anthropic-messages":
        from anthropic.types.user_message_param import UserMessageParam
        from anthropic.types import ToolResultBlockParam

        def message(m, w):
            problems = typed_dict(UserMessageParam, m, w)
            return problems + each(
                m.get("content"),
                f"{w}/content",
                lambda b, wb: typed_dict(ToolResultBlockParam, b, wb),
            )

        return each(value, where, message)
    if kind == "gemini-contents":
        from google.genai import types

        def content(c, w):
            problems = model(types.Content, c, w)
            for i, part in enumerate(c.get("parts") or []):
                problems += model(types.Part, part, f"{w}/parts/{i}")
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if response is not None:
                    problems += model(types.FunctionResponse, response, f"{w}/parts/{i}/functionResponse")
            return problems

        return each(value, where, content)
    if kind == "openai-tools":
        from openai.types.chat import ChatCompletionFunctionToolParam
        from openai.types.shared_params import FunctionDefinition

        return each(
            value,
            where,
            lambda t, w: typed_dict(ChatCompletionFunctionToolParam, t, w)
            + typed_dict(FunctionDefinition, t.get("function"), f"{w}/function"),
        )
    if kind == "openai-responses-tools":
        from openai.types.responses import FunctionToolParam

        return each(value, where, lambda t, w: typed_dict(FunctionToolParam, t, w))
    if kind == "anthropic-tools":
        from anthropic.types import ToolParam

        return each(value, where, lambda t, w: typed_dict(ToolParam, t, w))
    if kind == "gemini-tools":
        from google.genai import types

        def tool(t, w):
            problems = model(types.Tool, t, w)
            for i, declaration in enumerate(t.get("functionDeclarations") or []):
                problems += model(types.FunctionDeclaration, declaration, f"{w}/functionDeclarations/{i}")
            return problems

        return each(value, where, tool)
    if kind == "ollama-tools":
        import ollama

        return each(
            value,
            where,
            lambda t, w: model(ollama.Tool, t, w)
            + model(ollama.Tool.Function, t.get("function"), f"{w}/function"),
        )
    return [f"{where}: unknown kind {kind!r}"]


def inputs():
    import anthropic.types as at
    import ollama
    from google.genai import types as gt
    from openai.types.chat import ChatCompletion
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_message import ChatCompletionMessage
    from openai.types.chat.chat_completion_message_function_tool_call import (
        ChatCompletionMessageFunctionToolCall,
        Function,
    )
    from openai.types.responses import ResponseFunctionToolCall, ResponseReasoningItem

    read = {"path": "a.txt"}
    openai_chat = ChatCompletion(
        id="chatcmpl-1",
        object="chat.completion",
        created=0,
        model="gpt-test",
        choices=[
            Choice(
                index=0,
                finish_reason="tool_calls",
                message=ChatCompletionMessage(
                    role="assistant",
                    content=None,
                    tool_calls=[
                        ChatCompletionMessageFunctionToolCall(
                            id="call_read",
                            type="function",
                            function=Function(name="readfile", arguments=json.dumps(read)),
                        ),
                        ChatCompletionMessageFunctionToolCall(
                            id="call_nope",
                            type="function",
                            function=Function(name="nope", arguments="{}"),
                        ),
                    ],
                ),
            )
        ],
    )
    responses = [
        ResponseReasoningItem(id="rs_1", type="reasoning", summary=[]),
        ResponseFunctionToolCall(
            id="fc_1",
            type="function_call",
            call_id="call_read",
            name="readfile",
            arguments=json.dumps(read),
            status="completed",
        ),
        ResponseFunctionToolCall(
            type="function_call", call_id="call_nope", name="nope", arguments="{}"
        ),
    ]
    anthropic_message = at.Message(
        id="msg_1",
        type="message",
        role="assistant",
        model="claude-test",
        content=[
            at.TextBlock(type="text", text="Reading it."),
            at.ToolUseBlock(type="tool_use", id="toolu_read", name="readfile", input=read),
            at.ToolUseBlock(type="tool_use", id="toolu_nope", name="nope", input={}),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=at.Usage(input_tokens=1, output_tokens=1),
    )
    gemini = gt.GenerateContentResponse(
        candidates=[
            gt.Candidate(
                content=gt.Content(
                    role="model",
                    parts=[
                        gt.Part(text="Reading it."),
                        gt.Part(function_call=gt.FunctionCall(id="fc_read", name="readfile", args=read)),
                        gt.Part.from_function_call(name="nope", args={}),
                    ],
                )
            )
        ]
    )
    ollama_answer = ollama.ChatResponse(
        model="llama-test",
        message=ollama.Message(
            role="assistant",
            content="",
            tool_calls=[
                ollama.Message.ToolCall(function=ollama.Message.ToolCall.Function(name="readfile", arguments=read)),
                ollama.Message.ToolCall(function=ollama.Message.ToolCall.Function(name="nope", arguments={})),
            ],
        ),
    )
    dump = lambda m: m.model_dump(mode="json")
    return {
        "openai": dump(openai_chat),
        "openai-message": dump(openai_chat.choices[0].message),
        "openai-responses": [dump(item) for item in responses],
        "anthropic": dump(anthropic_message),
        "anthropic-blocks": [dump(block) for block in anthropic_message.content],
        # The API's own JSON is camelCase; the Python SDK dumps snake_case.
        "gemini": gemini.model_dump(mode="json", by_alias=True, exclude_none=True),
        "gemini-snake": gemini.model_dump(mode="json", exclude_none=True),
        "gemini-content": gemini.candidates[0].content.model_dump(mode="json", by_alias=True, exclude_none=True),
        "ollama": dump(ollama_answer),
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["inputs"]:
        print(json.dumps(inputs()))
    elif sys.argv[1:] == ["check"]:
        problems = []
        for i, item in enumerate(json.load(sys.stdin)):
            problems += check(item["kind"], item["value"], f"/{i} ({item['kind']})")
        print(json.dumps(problems))
    else:
        sys.exit("usage: sdk_models.py inputs|check")
